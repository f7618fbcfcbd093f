"""Validation on a whole dataset on a Dask cluster (Debian's python3-distributed).

::

    from parity.distributed import run_dataset

    def setup():  # runs once in each worker process
        model = OnnxFromPath("model.onnx")()
        return [PluginRefRunner(model), OnnxrtRunner(SessionFromOnnx(model))], CompareFunc.simple()

    summary = run_dataset(setup, DataLoader(iterations=1000))          # a local cluster
    summary = run_dataset(setup, feeds, address="tcp://scheduler:8786")  # an existing one
    summary.log()

Each worker calls ``setup`` once, keeps its runners active (a per-process cache keyed on the
setup function), and runs the feeds it is given in batches, returning one compact record per
feed (its verdict and error statistics; full outputs only with ``save_outputs_path``). The
summary is made from those records in dataset order, so it equals the one of
``parity.dataset.run_dataset`` in this process, bit for bit in every statistic.

A worker that dies mid-run has its unfinished batches run again on another worker (Dask's
scheduler does that); each batch's records are taken once, so nothing is lost or counted twice.
A feed that fails on a backend is a record naming the feed and the error, and the run goes on.
Generated data (a ``DataLoader``) is made on the workers from its seed; other feeds (files, a
generator) are read here and sent with their batch.
"""
import collections
import ctypes
import os
import threading

from parity import _parity
from parity.dataset import DatasetSummary, runner_core
from parity.logger import G_LOGGER

__all__ = ["run_dataset", "local_cluster"]

# Per worker process: setup key -> (DatasetFeedRunner, python runners). The runners are made
# and activated on the first batch a worker gets and stay active for the process's life.
_STATE = {}
_STATE_LOCK = threading.Lock()


def _restore_malloc_defaults():
    """Dask's nanny starts workers with MALLOC_TRIM_THRESHOLD_=65536, which also turns off
    glibc's adaptive mmap threshold: every intermediate tensor of more than 128 KiB is then a
    fresh mmap, page-faulted and zeroed on every feed, which cost the reference backend 12-14 %
    of its time (bench/README.md). Parity's runners allocate the same sizes feed after feed, so
    set what the adaptive threshold would settle at (glibc's maximum: 32 MiB, and twice that
    for trimming)."""
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return
    try:
        libc = ctypes.CDLL(None)
        m_trim_threshold, m_mmap_threshold = -1, -3  # glibc's <malloc.h>
        libc.mallopt(m_mmap_threshold, 32 << 20)
        libc.mallopt(m_trim_threshold, 64 << 20)
    except (OSError, AttributeError):  # not glibc: nothing to restore
        pass


def _pin_to_one_core():
    """On a local cluster Parity started, worker k runs on the k-th CPU of its affinity mask
    (round robin), so workers do not migrate between cores and the reference backend's
    default thread count (the affinity mask's size) is one thread per worker."""
    if os.environ.get("PARITY_DASK_PIN_WORKERS") != "1":
        return
    try:
        from distributed import get_worker

        index = int(get_worker().name)
    except (ImportError, ValueError, TypeError):
        return
    cpus = sorted(os.sched_getaffinity(0))
    core = {cpus[index % len(cpus)]}
    for task in os.listdir("/proc/self/task"):  # every thread of the process, not only this one
        try:
            os.sched_setaffinity(int(task), core)
        except OSError:
            pass


def _worker_state(key, setup, strict_inputs):
    with _STATE_LOCK:
        state = _STATE.get(key)
        if state is None:
            _restore_malloc_defaults()
            _pin_to_one_core()
            # The client prints the run; per-feed lines in every worker would interleave.
            _parity.set_severity(G_LOGGER.CRITICAL)
            made = setup()
            runners, compare_func = made if isinstance(made, tuple) else (made, None)
            feed_runner = _parity.DatasetFeedRunner(
                [runner_core(r) for r in runners], compare_func, strict_inputs
            )
            state = (feed_runner, runners)
            _STATE[key] = state
        return state


def _run_batch(key, setup, strict_inputs, keep_outputs, batch, data_loader):
    """One task: feeds [(index, feed or None)] -> [(index, record, outcomes or None)]."""
    feed_runner, _ = _worker_state(key, setup, strict_inputs)
    if data_loader is not None:
        data_loader.set_input_metadata(feed_runner.input_metadata)
    out = []
    for index, feed in batch:
        if feed is None:
            feed = data_loader[index]
        record, outcomes = feed_runner.run(index, feed, keep_outputs)
        out.append((index, record, outcomes))
    return feed_runner.names, out


def local_cluster(n_workers=2, threads_per_worker=1, pin_workers=True):
    """A cluster of worker processes on this machine, listening on loopback only. With
    ``pin_workers``, each worker runs its feeds on one core of this process's affinity mask."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=n_workers, threads_per_worker=threads_per_worker, processes=True,
        host="127.0.0.1", dashboard_address=None, silence_logs=50,
        env={"PARITY_DASK_PIN_WORKERS": "1" if pin_workers else "0"},
    )


def _feeds(data_loader, shard):
    """(index, feed or None) of the shard; None: the worker makes feed `index` itself."""
    index_of_shard, count = shard
    if isinstance(data_loader, _parity.DataLoader):
        for i in range(len(data_loader)):
            if i % count == index_of_shard:
                yield i, None
        return
    if isinstance(data_loader, _parity.FileFeeds):
        i = 0
        while True:
            feed = data_loader.get(i)  # files are read one at a time, in order
            if feed is None:
                return
            if i % count == index_of_shard:
                yield i, feed
            i += 1
    for i, feed in enumerate(data_loader):
        if i % count == index_of_shard:
            yield i, feed


def _feed_count(data_loader, shard):
    """How many feeds the shard has, when the data loader knows its length; else None."""
    try:
        total = len(data_loader)
    except TypeError:
        return None
    index_of_shard, count = shard
    return max(0, (total - index_of_shard + count - 1) // count)


def _batches(feeds, batch_size, remaining=None, workers=1):
    """Batches of at most batch_size feeds. With the number of feeds known, they shrink toward
    the end (guided scheduling: at most remaining / (2 x workers)), so the workers finish
    together instead of one waiting for the other's last full batch."""
    batch = []
    for item in feeds:
        batch.append(item)
        size = batch_size
        if remaining is not None:
            size = max(1, min(batch_size, -(-remaining // (2 * workers))))
        if len(batch) == size:
            if remaining is not None:
                remaining -= len(batch)
            yield batch
            batch = []
    if batch:
        yield batch


def run_dataset(setup, data_loader=None, address=None, n_workers=2, batch_size=8, shard=None,
                save_outputs_path=None, strict_inputs=False, client=None, key=None,
                max_in_flight=None, on_batch=None):
    """Runs every feed of ``data_loader`` on a Dask cluster and returns a DatasetSummary.

    Args:
        setup: A function (picklable, e.g. defined at a module's or a script's top level)
            returning ``runners`` or ``(runners, compare_func)``; each worker calls it once.
        data_loader: A DataLoader (feeds made on the workers), ``FileFeeds``, or any iterable
            of feed dicts. Default: DataLoader().
        address (str): The scheduler of an existing cluster; None starts a local cluster of
            ``n_workers`` worker processes on loopback (closed when the run ends).
        batch_size (int): Feeds per task, at most: when the number of feeds is known, the
            last batches are smaller, so that the workers finish together.
        shard ((int, int)): (index, count): only the iterations i with i % count == index.
        save_outputs_path (str): Workers return full outputs, saved there as
            ``parity run --dataset --save-outputs`` saves them.
        client: A ``distributed.Client`` to use instead of ``address``.
        key (str): Names the workers' cached state; default: a token of ``setup``.
        max_in_flight (int): Batches submitted at once (bounds memory); default 2 per worker.
        on_batch: Called as ``on_batch(client, batches_done)`` after each finished batch.
    """
    try:
        from dask.base import tokenize
        from distributed import Client, as_completed
    except ImportError as err:
        raise _parity.ParityException(
            f"failed to run on a Dask cluster: the module '{err.name}' is missing; install "
            f"Debian's python3-distributed (apt-get install -y python3-distributed)"
        ) from err

    if data_loader is None:
        data_loader = _parity.DataLoader()
    shard = (0, 1) if shard is None else (int(shard[0]), int(shard[1]))
    if shard[1] < 1 or not 0 <= shard[0] < shard[1]:
        raise _parity.ParityUsageError(
            f"failed to run a dataset with shard={shard}: give (index, count) with "
            f"0 <= index < count"
        )
    if int(batch_size) < 1:
        raise _parity.ParityUsageError(
            f"failed to run a dataset with batch_size={batch_size}: give at least 1"
        )
    key = key or "parity-setup-" + tokenize(setup)
    generated = isinstance(data_loader, _parity.DataLoader)
    keep_outputs = bool(save_outputs_path)

    cluster = None
    own_client = client is None
    if own_client:
        if address is None:
            cluster = local_cluster(n_workers)
            client = Client(cluster)
        else:
            client = Client(address)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        G_LOGGER.info(
            f"Dask | {workers} worker(s) at {client.scheduler.address} | "
            f"batches of {batch_size} feed(s)"
        )
        limit = int(max_in_flight or 2 * workers)
        records = []
        names = None
        first_index = None
        writer = None
        pending_outputs = {}
        order = collections.deque()  # indices whose outputs are due, in dataset order
        done = 0
        remote_loader = client.scatter(data_loader, broadcast=True) if generated else None

        def submit(batch):
            for index, _ in batch:
                if keep_outputs:
                    order.append(index)
            return client.submit(
                _run_batch, key, setup, bool(strict_inputs), keep_outputs, batch, remote_loader,
                key=f"parity-batch-{key}-{batch[0][0]}", pure=False,
            )

        batches = _batches(_feeds(data_loader, shard), int(batch_size),
                           _feed_count(data_loader, shard), workers)
        futures = as_completed()
        for _ in range(limit):
            batch = next(batches, None)
            if batch is None:
                break
            futures.add(submit(batch))
        for future in futures:
            batch_names, results = future.result()
            future.release()
            for index, record, outcomes in results:
                if first_index is None or index < first_index:
                    first_index, names = index, batch_names
                records.append(record)
                if keep_outputs:
                    pending_outputs[index] = outcomes
            if keep_outputs:
                if writer is None:
                    writer = _parity.RunResultsStreamWriter(str(save_outputs_path), batch_names)
                while order and order[0] in pending_outputs:
                    index = order.popleft()
                    writer.add_outcomes(index, pending_outputs.pop(index))
            done += 1
            if on_batch is not None:
                on_batch(client, done)
            batch = next(batches, None)
            if batch is not None:
                futures.add(submit(batch))

        summary = DatasetSummary(list(names or []))
        for record in records:
            summary.add(record)
        G_LOGGER.finish(f"Dask | Ran {len(records)} feed(s) in {done} batch(es)")
        if writer is not None:
            G_LOGGER.info(f"Saving inference results to {save_outputs_path}")
            writer.finish()
        return summary
    finally:
        if own_client:
            client.close()
        if cluster is not None:
            cluster.close()
