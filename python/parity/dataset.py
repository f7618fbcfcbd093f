"""Validation on a whole dataset, in this process (``parity run --dataset``).

``run_dataset`` streams the feeds through every runner at once (each runner is activated once),
compares each iteration as it comes and keeps only a compact record of it, so memory does not
grow with the dataset. The returned ``DatasetSummary`` prints the dataset view (pass rate, the
worst inputs by error with their indices, the distribution of the errors) with ``log()``.
``parity.distributed.run_dataset`` does the same on a Dask cluster and returns an equal summary.
"""
from parity import _parity
from parity._parity import DatasetIteration, DatasetSummary, FileFeeds

__all__ = ["DatasetIteration", "DatasetSummary", "FileFeeds", "run_dataset", "compare_results",
           "write_dataset_report", "runner_core"]


def runner_core(runner):
    """The C++ runner under one of Parity's Python runners (PluginRefRunner, OnnxrtRunner)."""
    cpp = getattr(runner, "_runner", None)
    if not isinstance(cpp, _parity.Runner):
        raise _parity.ParityUsageError(
            f"failed to run {type(runner).__name__} on a dataset: dataset runs take Parity's "
            f"runners (PluginRefRunner, OnnxrtRunner)"
        )
    return cpp


def _shard(shard):
    if shard is None:
        return 0, 1
    index, count = shard
    return int(index), int(count)


def run_dataset(runners, data_loader=None, compare_func=None, shard=None,
                save_outputs_path=None, strict_inputs=False):
    """Runs every feed of ``data_loader`` (a DataLoader, or any iterable of feed dicts) on all
    ``runners`` and compares them pairwise with ``compare_func`` (default CompareFunc.simple()).

    Args:
        shard ((int, int)): (index, count): run only the iterations i with i % count == index.
        save_outputs_path (str): streams every runner's outputs there, in Polygraphy's
            RunResults JSON with each iteration's dataset index (``parity data merge`` joins
            the files of shards).

    Returns:
        DatasetSummary
    """
    index, count = _shard(shard)
    return _parity.dataset_run(
        [runner_core(r) for r in runners], data_loader, compare_func, index, count,
        str(save_outputs_path or ""), bool(strict_inputs),
    )


def compare_results(run_results, compare_func=None):
    """Compares saved results of a dataset run (e.g. merged shards) as ``run_dataset`` did."""
    return _parity.dataset_compare_results(run_results, compare_func)


def write_dataset_report(path, summary, worst=5, command=""):
    """Writes the HTML report of a dataset run."""
    _parity.write_dataset_report(str(path), summary, int(worst), str(command))
