"""Where queries run: one interface over Dask distributed and a local process pool.

``Executor.map_unordered(fn, items)`` runs ``fn(item)`` for every item in worker processes and yields
``(index, result, error)`` in completion order (``error`` is ``None``, or one line when the executor
could not get a result: the task raised, or the worker running it kept dying). ``fn`` must be a
module-level function and the items and results picklable. Callers that need a deterministic output
sort by ``index`` (the sweep does); nothing about the order of completion may leak into a result.

* :class:`DaskExecutor`: Dask distributed (``pip install '.[distributed]'``), either a ``LocalCluster``
  of N single-threaded worker processes bound to 127.0.0.1, or an existing cluster by its scheduler
  address. A task of a worker that is lost is re-run by Dask on another worker (up to the scheduler's
  ``allowed-failures``, then it is reported as an error on that item).
* :class:`LocalExecutor`: ``concurrent.futures.ProcessPoolExecutor`` (spawned workers: they start from a
  fresh interpreter and inherit no state of the client). If a worker dies, the pool is rebuilt and the
  unfinished items are resubmitted; the items that were running then are re-run one at a time, and an
  item that kills its worker twice while running alone is reported as an error (it does not stop the rest).

``make_executor`` picks one (``kind`` ``"dask"``, ``"local"`` or ``None``: Dask if importable). Both are
context managers and release their workers (and a LocalCluster) on exit, also on Ctrl-C.
"""

from __future__ import annotations

import collections
import logging
import multiprocessing
import os
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Callable, Iterable, Iterator

from .. import signals
from ..balls import InputError, require_in

CONNECT_TIMEOUT = 4  # seconds to reach a scheduler (the whole failure, with the client's set-up, stays under 10 s)
MAX_WORKERS = 256


def dask_available() -> bool:
    try:
        import distributed  # noqa: F401
    except ImportError:
        signals.raise_if_arrived()
        return False
    return True


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover (not Linux)
        return max(1, os.cpu_count() or 1)


class Executor:
    """Runs ``fn`` over items in worker processes; see the module docstring."""

    kind = "abstract"

    def map_unordered(self, fn: Callable, items: Iterable) -> Iterator[tuple[int, object, str | None]]:
        raise NotImplementedError

    def describe(self) -> str:
        return self.kind

    def worker_count(self) -> int:
        return 1

    def close(self, abort: bool = False) -> None:
        """Release the workers; ``abort`` (Ctrl-C) stops running tasks instead of waiting for them."""

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(abort=exc_type is not None and issubclass(exc_type, KeyboardInterrupt))


class LocalExecutor(Executor):
    """A pool of ``workers`` spawned processes (the fallback when Dask is not installed)."""

    kind = "local"

    def __init__(self, workers: int):
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self.restarts = 0  # how many times a dead worker broke the pool (reported by the sweep)

    def worker_count(self) -> int:
        return self.workers

    def describe(self) -> str:
        return f"local process pool, {self.workers} worker{'s' if self.workers != 1 else ''}"

    def _fresh_pool(self) -> ProcessPoolExecutor:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = ProcessPoolExecutor(
            max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_local_worker_setup, initargs=(os.getpid(),)
        )
        return self._pool

    def map_unordered(self, fn, items):
        items = list(items)
        pending = collections.deque(range(len(items)))
        suspects: collections.deque[int] = collections.deque()  # running when a worker died: re-run alone
        kills: collections.Counter[int] = collections.Counter()
        window = 4 * self.workers
        pool = self._pool or self._fresh_pool()
        inflight: dict = {}
        while pending or suspects or inflight:
            broken = False
            while not broken and (suspects and not inflight or not suspects and pending and len(inflight) < window):
                i = suspects.popleft() if suspects else pending.popleft()
                try:
                    with signals.sigint_blocked():  # a worker spawned here inherits no terminal Ctrl-C (see signals)
                        inflight[pool.submit(fn, items[i])] = i
                except BrokenProcessPool:
                    (suspects if kills[i] else pending).appendleft(i)
                    broken = True
            if inflight:
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for fut in done:
                    i = inflight.pop(fut)
                    try:
                        result = fut.result()
                    except BrokenProcessPool:
                        broken = True
                        alone = not inflight and not done - {fut} and kills[i] > 0
                        kills[i] += 1
                        if alone and kills[i] >= 3:  # died twice running alone: this item kills its worker
                            yield i, None, "a worker process died while running this query (3 times)"
                        else:
                            suspects.append(i)
                        continue
                    except Exception as err:  # fn raised (the sweep's runner never does)
                        yield i, None, f"{type(err).__name__}: {err}"
                        continue
                    yield i, result, None
            if broken:
                for i in inflight.values():  # every unfinished future died with the pool
                    kills[i] += 1
                    suspects.append(i)
                inflight = {}
                self.restarts += 1
                pool = self._fresh_pool()

    def close(self, abort: bool = False) -> None:
        pool, self._pool = self._pool, None
        if pool is None:
            return
        if abort:  # Ctrl-C / SIGTERM: do not wait for the running queries
            processes = list((pool._processes or {}).values())  # no public accessor for the pool's processes
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in processes:
                proc.terminate()  # SIGTERM: the worker runs its exit handlers (scratch files) and exits (_local_worker_setup)
            for proc in processes:
                proc.join(5)
            for proc in processes:
                if proc.is_alive():  # stuck in a long C call: SIGKILL
                    proc.kill()
                    proc.join(5)
            return
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_sigint() -> None:
    """Workers leave Ctrl-C to the client, which stops them (no traceback from each worker on a terminal)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _local_worker_setup(parent: int) -> None:
    """Initializer of a local pool worker: it ends with its parent, whatever ends the parent.

    * Ctrl-C is ignored (the client stops the workers);
    * SIGTERM (the client's abort) runs the worker's exit handlers (its scratch folder is removed), then exits;
    * if the parent dies, even by SIGKILL, the worker exits: Linux's ``PR_SET_PDEATHSIG`` sends it SIGTERM, and
      a watcher thread polling ``os.getppid()`` covers other systems and a parent that died before this ran.
    The pool's resource tracker exits by itself once every process holding its pipe is gone."""
    import atexit
    import signal
    import threading
    import time

    _ignore_sigint()

    def leave(signum=None, frame=None):
        try:
            atexit._run_exitfuncs()  # e.g. the scratch folder of sweep.runner
        finally:
            os._exit(143)

    signal.signal(signal.SIGTERM, leave)
    _parent_death_signal(signal.SIGTERM)
    if os.getppid() != parent:
        leave()

    def watch():
        while os.getppid() == parent:
            time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs in the main thread

    threading.Thread(target=watch, name="certify-parent-watch", daemon=True).start()


def _parent_death_signal(signum: int) -> None:
    """``prctl(PR_SET_PDEATHSIG, signum)`` on Linux (the kernel signals this process when its parent dies); else nothing."""
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signum, 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # pragma: no cover (no libc prctl)
        pass


def dask_setup(worker=None) -> None:
    """Dask preload (``distributed.worker.preload``) of the LocalCluster's workers: Ctrl-C is the client's to handle."""
    _ignore_sigint()


def _quiet_dask() -> None:
    """Dask logs connection chatter at INFO/WARNING on stderr: keep only errors."""
    for name in (
        "distributed",
        "distributed.scheduler",
        "distributed.worker",
        "distributed.nanny",
        "distributed.core",
        "distributed.comm",
        "distributed.client",
        "distributed.batched",
        "distributed.utils_perf",
        "distributed.http.proxy",
        "tornado",
        "asyncio",
        "bokeh",
    ):
        logging.getLogger(name).setLevel(logging.ERROR)


class DaskExecutor(Executor):
    """Dask distributed: a LocalCluster of ``workers`` processes on 127.0.0.1, or the cluster at ``scheduler``."""

    kind = "dask"
    WINDOW = 4096  # tasks in flight at once (the rest are submitted as these complete)

    def __init__(self, workers: int | None = None, scheduler: str | None = None, connect_timeout: float = CONNECT_TIMEOUT):
        try:
            import dask
            import distributed
        except ImportError:
            raise InputError("--executor", "dask is not installed: pip install '.[distributed]' (or use --executor local)") from None
        _quiet_dask()
        self.scheduler = scheduler
        self.cluster = None
        self.client = None
        dask.config.set(
            {
                "distributed.admin.tick.limit": "1h",  # no 'event loop unresponsive' warnings
                "distributed.worker.daemon": False,
                "distributed.worker.profile.enabled": False,  # its stack sampling costs CPU per task
                "distributed.comm.timeouts.connect": f"{connect_timeout}s",
            }
        )
        try:
            if scheduler:
                _probe(scheduler, connect_timeout)  # fail fast and cleanly: a failed Client lingers in __del__
                self.client = distributed.Client(scheduler, timeout=2 * connect_timeout, set_as_default=False)
            else:
                # a signal while the cluster starts is held back, then raised once it can be closed (never dropped);
                # its workers ignore Ctrl-C (preload dask_setup above): stopping them is the client's job
                dask.config.set({"distributed.worker.preload": [__name__]})
                # multiprocessing starts its resource tracker by blocking, then UNBLOCKING, SIGINT in the calling thread:
                # started here, before the block, it cannot undo the blocked SIGINT the workers must inherit
                from multiprocessing import resource_tracker

                resource_tracker.ensure_running()
                with signals.deferred():
                    self.cluster = distributed.LocalCluster(
                        n_workers=workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        worker_dashboard_address=None,
                        silence_logs=logging.CRITICAL,
                        # without a dashboard the scheduler still serves HTTP (health, metrics) on port 8787,
                        # so a second cluster on this machine would warn; any free local port instead
                        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
                    )
                self.client = distributed.Client(self.cluster, set_as_default=False)
        except (Exception, MemoryError) as err:  # whatever answered is not a usable scheduler
            self.close()
            msg = " ".join(str(err).split()) or type(err).__name__
            if not scheduler:
                raise InputError("--executor", f"could not start a local Dask cluster: {msg}") from None
            if not isinstance(err, (OSError, TimeoutError, ValueError, TypeError)):
                # e.g. a server that is not a Dask scheduler answers the handshake with garbage
                msg = f"something answered, but not as a Dask scheduler ({type(err).__name__})"
            raise InputError("--scheduler", f"cannot reach the Dask scheduler at {scheduler}: {msg}") from None
        except BaseException:
            self.close()
            raise
        self.workers = workers

    def worker_count(self) -> int:
        return len(self.client.scheduler_info().get("workers", {})) if self.client else 0

    def describe(self) -> str:
        n = self.worker_count()
        where = f"scheduler {self.scheduler}" if self.scheduler else "LocalCluster on 127.0.0.1"
        return f"Dask distributed, {where}, {n} worker{'s' if n != 1 else ''}"

    def map_unordered(self, fn, items):
        import distributed

        items = list(items)
        index: dict[str, int] = {}
        nxt = 0

        def submit(count: int) -> list:
            nonlocal nxt
            chunk = items[nxt : nxt + count]
            futs = self.client.map(fn, chunk, pure=False) if chunk else []
            for k, f in enumerate(futs):
                index[f.key] = nxt + k
            nxt += len(futs)
            return futs

        # results are fetched by the client's event loop as tasks finish (no round trip per result from here)
        stream = distributed.as_completed(submit(self.WINDOW), loop=self.client.loop, with_results=True, raise_errors=False)
        for fut, result in stream:
            i = index.pop(fut.key)
            error = None
            if fut.status != "finished":
                err = result[1] if isinstance(result, tuple) and len(result) == 3 else result
                result, error = None, " ".join(f"{type(err).__name__}: {err}".split())
            fut.release()
            for f in submit(1):
                stream.add(f)
            yield i, result, error

    def close(self, abort: bool = False) -> None:
        client, cluster = self.client, self.cluster
        self.client = self.cluster = None
        for thing in (client, cluster):
            if thing is not None:
                try:
                    thing.close()
                except Exception:  # closing after a failure: nothing more to do  # noqa: BLE001
                    pass


def _probe(address: str, timeout: float) -> None:
    """Connect to ``address`` and complete Dask's handshake (raises if nothing usable answers in ``timeout`` s)."""
    import asyncio

    from distributed.comm import connect

    async def handshake() -> None:
        comm = await connect(address, timeout=timeout)
        await comm.close()

    asyncio.run(asyncio.wait_for(handshake(), timeout + 1))


def make_executor(kind: str | None = None, workers: int | None = None, scheduler: str | None = None) -> Executor:
    """``kind`` dask / local / None (Dask if importable, else local); ``scheduler`` implies Dask."""
    if workers is not None:
        require_in("--workers", workers, 1, MAX_WORKERS, "[]", integer=True)
    if scheduler is not None:
        if kind == "local":
            raise InputError("--scheduler", "a scheduler address needs --executor dask")
        if workers is not None:
            raise InputError("--workers", "with --scheduler the cluster's own workers are used: drop --workers")
        return DaskExecutor(scheduler=scheduler)
    if kind is None:
        kind = "dask" if dask_available() else "local"
    n = workers or default_workers()
    if kind == "dask":
        return DaskExecutor(workers=n)
    if kind == "local":
        return LocalExecutor(n)
    raise InputError("--executor", f"must be dask or local, got {kind!r}")
