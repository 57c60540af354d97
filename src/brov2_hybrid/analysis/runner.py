"""Run sweep jobs in parallel: local processes (default) or a Dask cluster, with progress.

``Runner(jobs=N).map(fn, items, label)`` returns ``[fn(item) for item in items]`` in
order. ``fn`` must be a module-level function and the items picklable. Progress goes to
stderr, one line per finished job. With ``dask_address`` the jobs go to a
``dask.distributed`` scheduler (``pip install "dask[distributed]"``; every worker needs
brov2_hybrid importable and the same params/).
"""
import concurrent.futures
import os
import sys
import time

from brov2_hybrid.errors import Brov2Error


def default_jobs():
    """Number of worker processes: the machine's cores."""
    return max(1, os.cpu_count() or 1)


class Runner(object):
    """Maps jobs over processes or a Dask cluster.

    Parameters
    ----------
    jobs : int, optional
        Worker processes (default: number of cores); 1 runs in this process.
    dask_address : str, optional
        Scheduler address, e.g. ``tcp://10.0.0.5:8786``.
    progress : bool
        Print a progress line per finished job on stderr.
    """

    def __init__(self, jobs=None, dask_address=None, progress=True, stream=None):
        self.jobs = default_jobs() if jobs is None else int(jobs)
        if self.jobs < 1:
            raise Brov2Error("jobs: expected an integer >= 1, got %r" % jobs)
        self.dask_address = dask_address
        self.progress = progress
        self.stream = stream or sys.stderr
        self._client = None

    def describe(self):
        """Where the jobs run, for the console: "dask cluster at ADDRESS" or "N local processes"."""
        if self.dask_address:
            return "dask cluster at %s" % self.dask_address
        return "%d local process%s" % (self.jobs, "" if self.jobs == 1 else "es")

    def _report(self, label, done, total, start):
        if self.progress:
            self.stream.write("[%s] %d/%d done, %.1f s\n" % (label, done, total, time.perf_counter() - start))
            self.stream.flush()

    def map(self, fn, items, label="jobs"):
        """``[fn(item) for item in items]`` in order, run in this process (jobs = 1 or a single item),
        over a process pool or on the Dask cluster; one progress line per finished job.

        The first exception of a job is raised here; without dask installed, --dask raises Brov2Error."""
        items = list(items)
        start = time.perf_counter()
        if not items:
            return []
        if self.dask_address:
            return self._map_dask(fn, items, label, start)
        if self.jobs == 1 or len(items) == 1:
            out = []
            for k, item in enumerate(items):
                out.append(fn(item))
                self._report(label, k + 1, len(items), start)
            return out
        results = [None] * len(items)
        with concurrent.futures.ProcessPoolExecutor(max_workers=min(self.jobs, len(items))) as pool:
            futures = {pool.submit(fn, item): k for k, item in enumerate(items)}
            for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
                results[futures[future]] = future.result()
                self._report(label, done, len(items), start)
        return results

    def _dask_client(self):
        if self._client is None:
            try:
                from dask.distributed import Client
            except ImportError:
                raise Brov2Error("--dask needs dask.distributed: pip install \"dask[distributed]\" "
                                 "(or run without --dask to use the local cores)")
            self._client = Client(self.dask_address)
        return self._client

    def _map_dask(self, fn, items, label, start):
        client = self._dask_client()  # raises the clear error when dask is missing
        from dask.distributed import as_completed
        futures = client.map(fn, items, pure=False)
        index = {f.key: k for k, f in enumerate(futures)}
        results = [None] * len(items)
        for done, future in enumerate(as_completed(futures), 1):
            results[index[future.key]] = future.result()
            self._report(label, done, len(items), start)
        return results

    def close(self):
        """Close the Dask client, if one was opened (no-op for local processes)."""
        if self._client is not None:
            self._client.close()
            self._client = None
