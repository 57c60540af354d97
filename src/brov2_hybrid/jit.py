"""numba compilation of the core's kernels: the same Python functions, compiled where possible.

A kernel is a plain Python function on floats and numpy arrays (no objects), written so
that numba's nopython mode accepts it. Where numba is installed the callers run it
compiled; without numba (e.g. on Noetic, whose numpy 1.17 is older than any numba that
runs on Python 3.8 with it), with ``BROV2_NO_JIT=1``, or when numba cannot compile it
here, they run the Python function itself. There is one implementation; compilation only
changes its speed. Compiled code keeps IEEE arithmetic (no fast-math, no contraction into
fused multiply-adds), and every family is checked on a probe call against the Python
function before it is used: a compiled kernel that answered differently is not used.

Compiled code is cached on disk (numba's cache) in a folder named by a hash of the
family's source files and the numba version, under :func:`cache_root`: numba keys its own
cache on a kernel's source file alone and would not notice an edit of a callee in another
module; a new folder per source version does. Compiling costs from one to over ten
seconds per family (the stock search's least-squares solves are the slow part), once per
source version and machine; loading it from the cache, a fraction of a second per process.
"""
import hashlib
import inspect
import os
import types

#: Set (to anything but "" or "0") to run every kernel as Python.
NO_JIT_ENV = "BROV2_NO_JIT"

_GROUPED = {}    # dispatcher -> its grouped_call
_FAMILIES = {}   # family name -> {function name: compiled dispatcher} or None


#: Environment variable naming the cache folder (default ~/.cache/brov2_hybrid/numba).
CACHE_ENV = "BROV2_NUMBA_CACHE"


def cache_root():
    """The folder of the compiled-kernel caches: $BROV2_NUMBA_CACHE, else
    $XDG_CACHE_HOME/brov2_hybrid/numba (default ~/.cache/brov2_hybrid/numba)."""
    if os.environ.get(CACHE_ENV):
        return os.environ[CACHE_ENV]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "brov2_hybrid", "numba")


def _cache_dir(name, functions, numba_version):
    """The cache folder of one family: named by the hash of its modules' sources."""
    digest = hashlib.sha256(numba_version.encode())
    for path in sorted(set(inspect.getsourcefile(f) for f in functions)):
        with open(path, "rb") as handle:
            digest.update(handle.read())
    return os.path.join(cache_root(), "%s-%s" % (name, digest.hexdigest()[:16]))


def compiled_families():
    """{family name: True when it runs compiled} for the families asked for so far."""
    return {name: kernels is not None for name, kernels in _FAMILIES.items()}


def jit_disabled():
    """True when ``BROV2_NO_JIT`` asks for the Python kernels."""
    return os.environ.get(NO_JIT_ENV, "") not in ("", "0")


def compile_family(name, functions, probe=None):
    """The functions of one kernel family compiled by numba, or None (then run them as Python).

    Parameters
    ----------
    name : str
        The family's name (compiled once per process under this name).
    functions : sequence of functions
        The kernels; each may call the others by their module-level names (the compiled
        versions call each other compiled). Names must be unique within the family.
    probe : callable, optional
        ``probe(compiled)`` with ``compiled`` a dict {function name: compiled function}:
        compiles by calling them (so that no run pays for compilation) and returns True
        when they gave the Python functions' results. False, or any exception (numba
        could not type or compile a kernel here), keeps the Python functions.

    Returns
    -------
    dict {function name: compiled function} or None
    """
    if name in _FAMILIES:
        return _FAMILIES[name]
    _FAMILIES[name] = None
    if jit_disabled():
        return None
    try:
        import numba
    except ImportError:       # not installed, or no numba for this numpy
        return None
    scopes = [dict(f.__globals__) for f in functions]
    compiled = {}
    cache = _cache_dir(name, functions, numba.__version__)
    try:
        os.makedirs(cache, exist_ok=True)
        cache = os.access(cache, os.W_OK) and cache
    except OSError:               # no writable cache here: compile in every process
        cache = None
    saved_dir = numba.config.CACHE_DIR
    if cache:
        numba.config.CACHE_DIR = cache     # read when each dispatcher sets up its cache
    try:
        for f, scope in zip(functions, scopes):
            # numba files its cache under the kernel's source folder as the code names it;
            # the catkin workspace imports the package through symlinks, the command line
            # from the repository: the real path gives every process the same cache.
            code = f.__code__
            real = os.path.realpath(code.co_filename)
            if real != code.co_filename:
                code = code.replace(co_filename=real)
            clone = types.FunctionType(code, scope, f.__name__, f.__defaults__, f.__closure__)
            compiled[f.__name__] = numba.njit(cache=bool(cache))(clone)
    finally:
        numba.config.CACHE_DIR = saved_dir
    for scope in scopes:          # the compiled kernels call each other's compiled versions
        scope.update(compiled)
    try:
        if probe is not None and not probe(compiled):
            return None
    except Exception:             # numba could not compile a kernel here: Python runs
        return None
    _FAMILIES[name] = compiled
    return compiled


def grouped_call(dispatcher):
    """``dispatcher`` (a compiled kernel) as a function that types its tuple arguments once per kind.

    A numba dispatcher types a call's arguments from a fingerprint of their types computed in C,
    looked up in its cache. numba 0.58 garbles the first bytes of a fingerprint longer than 40
    bytes (a tuple of five or more arrays): its cache never finds one, and it types such an
    argument again in Python on every call, some tens of microseconds per tuple. This function
    keys the compiled entry point on the fingerprints of the arguments' elements (tuples opened,
    each one short: numba's own key, of array kinds, dimensions, layouts, writability and
    dtypes and the types of numbers) and calls it directly; the first call of each kind goes
    through the dispatcher (which compiles it if needed). Without numba's fingerprint function,
    the dispatcher itself. One such function per dispatcher and process.
    """
    if dispatcher in _GROUPED:
        return _GROUPED[dispatcher]
    try:
        from numba._dispatcher import compute_fingerprint
    except ImportError:          # another numba: its dispatcher as it is
        return dispatcher
    entry_points = {}

    def type_key(values):
        """The fingerprints of the elements of ``values`` (a tuple), tuples opened, as nested tuples."""
        key = []
        for v in values:
            key.append(type_key(v) if type(v) is tuple else compute_fingerprint(v))
        return tuple(key)

    def call(*args):
        """``dispatcher(*args)``, through the compiled entry point of their kind once known."""
        key = type_key(args)
        entry = entry_points.get(key)
        if entry is not None:
            return entry(*args)
        result = dispatcher(*args)
        compiled = dispatcher.overloads.get(tuple(dispatcher.typeof_pyval(a) for a in args))
        if compiled is not None and _intact(key):    # None: numba converted the arguments
            entry_points[key] = compiled.entry_point
        return result

    call.dispatcher = dispatcher
    _GROUPED[dispatcher] = call
    return call


def _intact(key):
    """True when no fingerprint in ``key`` (nested tuples of them) is long enough to be garbled."""
    return all(_intact(k) if type(k) is tuple else len(k) <= _FINGERPRINT_BYTES for k in key)


#: The longest type fingerprint numba 0.58 computes intact [bytes].
_FINGERPRINT_BYTES = 40
