-- Stand-ins for the ArduSub Lua bindings the on-board script uses (test/test_onboard_lua.py).
-- H holds the fake vehicle: clock, arming, mode, attitude, parameters, motor functions, the
-- MAVLink queue, the RC channels; and records every servo override, text and named float the script sends.
H = {now = 0.0, armed = true, mode = 19, att = {0.0, 0.0, 0.0}, gyro = {0.0, 0.0, 0.0},
     params = {SYSID_THISMAV = 1}, functions = {}, queue = {}, servo = {}, texts = {}, named = {}, rc = {}}
for i = 1, 8 do H.functions[32 + i] = i - 1 end

arming = {is_armed = function(self) return H.armed end}
vehicle = {get_mode = function(self) return H.mode end}
ahrs = {
  get_roll = function(self) return H.att[1] end,
  get_pitch = function(self) return H.att[2] end,
  get_yaw = function(self) return H.att[3] end,
  get_gyro = function(self)
    local g = H.gyro
    return {x = function() return g[1] end, y = function() return g[2] end, z = function() return g[3] end}
  end,
}
rc = {get_pwm = function(self, ch) return H.rc[ch] end}   -- ArduSub's RC channel inputs [us] (nil: none)
SRV_Channels = {
  find_channel = function(self, fn) return H.functions[fn] end,
  set_output_pwm_chan_timeout = function(self, ch, pwm, timeout_ms)
    assert(math.type(ch) == "integer" and math.type(pwm) == "integer" and math.type(timeout_ms) == "integer",
           "set_output_pwm_chan_timeout takes integers")
    H.servo[#H.servo + 1] = {t = H.now, ch = ch, pwm = pwm, timeout = timeout_ms}
  end,
}
gcs = {
  send_text = function(self, severity, text) H.texts[#H.texts + 1] = {t = H.now, severity = severity, text = text} end,
  send_named_float = function(self, name, value) H.named[#H.named + 1] = {t = H.now, name = name, value = value} end,
}
param = {
  get = function(self, name) return H.params[name] end,
  add_table = function(self, key, prefix, n) H.prefix = prefix; return true end,
  add_param = function(self, key, index, name, default)
    if H.params[H.prefix .. name] == nil then H.params[H.prefix .. name] = default end
    return true
  end,
}
mavlink = {
  init = function(self, queue, n) H.mavlink_init = true end,
  register_rx_msgid = function(self, id) H.msgid = id; return true end,
  receive_chan = function(self)
    local msg = table.remove(H.queue, 1)
    if msg then return msg, 0, {tofloat = function(self) return H.now end} end
  end,
}
millis = function() return {tofloat = function(self) return H.now end} end

function from_hex(hex)
  return (hex:gsub("..", function(byte) return string.char(tonumber(byte, 16)) end))
end

-- Run the script's loop from H.now to until_ms as ArduSub would: each turn asks for the next.
function run_until(M, until_ms)
  while H.now < until_ms do
    local _, delay = M.update()
    H.now = H.now + delay
  end
end

-- Servo calls made in [t0, t1), as "t ch pwm timeout" lines.
function print_servo(t0, t1)
  for _, c in ipairs(H.servo) do
    if c.t >= t0 and c.t < t1 then print(string.format("servo %.1f %d %d %d", c.t, c.ch, c.pwm, c.timeout)) end
  end
end

BROV2_EXPORT = true

-- Lua VM instructions one call of fn takes (the count ArduSub holds to SCR_VM_I_COUNT per loop turn).
function count_instructions(fn)
  local n = 0
  debug.sethook(function() n = n + 1 end, "", 1)
  fn()
  debug.sethook()
  return n
end
