"""Running, comparing and validating (Polygraphy's ``polygraphy.comparator``).

``Comparator.run`` and ``compare_accuracy`` are Parity's C++ ones: the same log lines as
``parity run``. A data loader may be ``DataLoader`` (Polygraphy's inputs bit for bit) or any
iterable of feed dicts, such as a generator; a compare function may be one of ``CompareFunc``'s
or any callable ``(IterationResult, IterationResult) -> {output name: bool}``.
"""
import os
import warnings

from parity import _parity
from parity._parity import (
    AccuracyResult,
    IterationResult,
    OutputCompareResult,
    RunResults,
    TensorMetadata,
)
from parity.backend.base import BaseRunner
from parity.logger import G_LOGGER


class DataLoader(_parity.DataLoader):
    """Generates Polygraphy's inputs bit for bit (NumPy's RandomState, seed + iteration).

    Args:
        seed (int): The seed of the first iteration. Default 1.
        iterations (int): The number of feeds. Default 1.
        input_metadata (TensorMetadata): Shapes and dtypes to use instead of the model's.
        val_range: (min, max) for every input, or a dict of input name -> (min, max) with ""
            for the default. Default (0.0, 1.0).
        int_range, float_range: [deprecated in Polygraphy, use val_range] (min, max) of every
            integer / floating input, in place of val_range.
        sequence_length (int): [Parity only] The number of tensors of a generated sequence
            input (of maps, for a sequence of maps). Default 1.
        map_size (int): [Parity only] The number of entries of a generated map input; its keys
            are 0, 1, ... (as strings for string keys). Default 1.

    A sequence or map input comes as its derived names (``s[0]``, ``m.keys``, ``m.values``),
    as runners take and give them; Polygraphy's loader cannot generate such inputs.

    ``input_metadata`` is then the model's inputs once a runner has given them (before that,
    the ones given, or None).
    """

    def __init__(self, seed=None, iterations=None, input_metadata=None, int_range=None,
                 float_range=None, val_range=None, data_loader_backend_module=None,
                 sequence_length=1, map_size=1):
        for name, value in (("int_range", int_range), ("float_range", float_range)):
            if value is not None:
                warnings.warn(
                    f"The {name} parameter in DataLoader is deprecated and will be removed in "
                    f"Polygraphy 0.50.0. Use val_range instead.",
                    DeprecationWarning, stacklevel=2,
                )
        if data_loader_backend_module not in (None, "numpy"):
            _unsupported("data_loader_backend_module", data_loader_backend_module)
        super().__init__(
            seed=1 if seed is None else seed, iterations=1 if iterations is None else iterations,
            input_metadata=input_metadata, val_range=val_range, int_range=int_range,
            float_range=float_range, sequence_length=sequence_length, map_size=map_size,
        )


def _unsupported(what, value):
    raise _parity.ParityUsageError(
        f"failed to use {what}={value!r}: Parity does not support this option; leave it unset"
    )


class CompareFunc:
    """Compare functions: ``simple`` (tolerances) and ``indices`` (top-K indices)."""

    @staticmethod
    def simple(check_shapes=None, rtol=None, atol=None, fail_fast=None, find_output_func=None,
               check_error_stat=None, infinities_compare_equal=None, save_heatmaps=None,
               show_heatmaps=None, save_error_metrics_plot=None, show_error_metrics_plot=None,
               error_quantile=None):
        """Polygraphy's ``CompareFunc.simple``: per-output ``rtol``/``atol`` (a number or a
        dict with "" as the default), ``check_error_stat`` of elemwise/max/mean/median/quantile.

        ``save_heatmaps`` / ``save_error_metrics_plot`` name folders where the figures of each
        compared output's errors are saved under Polygraphy's names (SVG heatmaps, PNG plots;
        ``parity.comparator.error_plots``); ``show_*`` shows them in windows instead, which
        needs a display. Both need matplotlib (Debian's python3-matplotlib)."""
        if find_output_func:
            _unsupported("find_output_func", find_output_func)
        plots = {
            "save_heatmaps": "" if save_heatmaps is None else os.fspath(save_heatmaps),
            "show_heatmaps": bool(show_heatmaps),
            "save_error_metrics_plot":
                "" if save_error_metrics_plot is None else os.fspath(save_error_metrics_plot),
            "show_error_metrics_plot": bool(show_error_metrics_plot),
        }
        plotter = None
        if any(plots.values()):
            from parity.comparator import error_plots

            plotter = error_plots.api_plotter(show=plots["show_heatmaps"]
                                              or plots["show_error_metrics_plot"])
        return _parity.compare_func_simple(
            True if check_shapes is None else bool(check_shapes), rtol, atol, bool(fail_fast),
            check_error_stat, bool(infinities_compare_equal), error_quantile, plotter=plotter,
            **plots,
        )

    @staticmethod
    def distance_metrics(l2_tolerance=None, cosine_similarity_threshold=None, check_shapes=None,
                         fail_fast=None, find_output_func=None):
        """Polygraphy's ``CompareFunc.distance_metrics``: passes when the L2 norm of the
        difference is within ``l2_tolerance`` and the cosine similarity reaches the threshold."""
        if find_output_func:
            _unsupported("find_output_func", find_output_func)
        return _parity.compare_func_distance(
            l2_tolerance, cosine_similarity_threshold,
            True if check_shapes is None else bool(check_shapes), bool(fail_fast),
        )

    @staticmethod
    def quality_metrics(psnr_tolerance=None, snr_tolerance=None, check_shapes=None,
                        fail_fast=None, find_output_func=None):
        """Polygraphy's ``CompareFunc.quality_metrics``: passes when PSNR and SNR (dB) reach
        their tolerances."""
        if find_output_func:
            _unsupported("find_output_func", find_output_func)
        return _parity.compare_func_quality(
            psnr_tolerance, snr_tolerance, True if check_shapes is None else bool(check_shapes),
            bool(fail_fast),
        )

    @staticmethod
    def indices(index_tolerance=None, fail_fast=None):
        """Polygraphy's ``CompareFunc.indices``: for outputs that are top-K indices."""
        return _parity.compare_func_indices(index_tolerance, bool(fail_fast))


class PostprocessFunc:
    @staticmethod
    def top_k(k=None):
        """Replaces each output with the indices of its k largest values; ``k`` is an int,
        ``(k, axis)``, or a dict of output name -> either ("" is the default)."""
        return _parity.postprocess_top_k(10 if k is None else k)


class _DuckRunner(BaseRunner):
    """A runner that does not derive from BaseRunner but has its public methods (activate,
    get_input_metadata, infer, deactivate, name), as Polygraphy's Comparator accepts it."""

    def __init__(self, runner):
        self._wrapped = runner
        super().__init__(name=str(runner.name))

    def activate_impl(self):
        self._wrapped.activate()

    def get_input_metadata_impl(self):
        return self._wrapped.get_input_metadata()

    def infer_impl(self, feed_dict):
        outputs = self._wrapped.infer(feed_dict)
        last = getattr(self._wrapped, "last_inference_time", None)
        self.inference_time = last() if callable(last) else None
        return outputs

    def deactivate_impl(self):
        self._wrapped.deactivate()


def _cpp_runner(runner, keep_alive):
    cpp = getattr(runner, "_runner", None)
    if isinstance(cpp, _parity.Runner):
        return cpp
    if isinstance(runner, BaseRunner):
        raise _parity.ParityUsageError(
            f"failed to run {type(runner).__name__}: its __init__ did not call "
            f"BaseRunner.__init__(self, name=..., prefix=...); call it first"
        )
    if all(hasattr(runner, m) for m in ("name", "activate", "get_input_metadata", "infer",
                                         "deactivate")):
        adapter = _DuckRunner(runner)
        keep_alive.append(adapter)  # the C++ runner holds its Python object weakly
        return adapter._runner
    raise _parity.ParityUsageError(
        f"failed to run {type(runner).__name__}: Comparator.run takes runners (Parity's, a "
        f"BaseRunner subclass, or an object with name, activate, get_input_metadata, infer "
        f"and deactivate)"
    )


class Comparator:
    @staticmethod
    def run(runners, data_loader=None, warm_up=None, use_subprocess=None,
            subprocess_timeout=None, subprocess_polling_interval=None, save_inputs_path=None,
            strict_inputs=False):
        """Runs every runner on the same feeds and returns RunResults.

        Feeds are fitted to each runner's inputs (renamed, cast, reshaped) with Polygraphy's
        warnings; ``strict_inputs=True`` (Parity's own) feeds the first runner exactly what the
        data loader gives, so a feed that does not fit is refused. ``use_subprocess=True`` runs
        each runner in a child process (a crash raises that runner's error instead of killing
        Python); ``subprocess_timeout`` (seconds) bounds each answer of the child.
        ``subprocess_polling_interval`` is accepted for Polygraphy's signature and not needed:
        the parent notices a dead child at once.
        """
        if not runners:
            G_LOGGER.warning(
                "No runners were provided to Comparator.run(). Inference will not be run."
            )
            return RunResults()
        keep_alive = []
        cpp_runners = [_cpp_runner(r, keep_alive) for r in runners]
        return _parity.comparator_run(
            cpp_runners, data_loader, int(warm_up or 0), str(save_inputs_path or ""),
            bool(strict_inputs), bool(use_subprocess), subprocess_timeout,
        )

    @staticmethod
    def postprocess(run_results, postprocess_func):
        """Applies a function to every IterationResult (in place); returns the results."""
        _parity.comparator_postprocess(run_results, postprocess_func)
        return run_results

    @staticmethod
    def default_comparisons(run_results):
        return _parity.comparator_default_comparisons(run_results)

    @staticmethod
    def compare_accuracy(run_results, fail_fast=False, comparisons=None, compare_func=None):
        """Compares consecutive runners (or the given index pairs); returns AccuracyResult."""
        if comparisons is not None:
            comparisons = [tuple(p) for p in comparisons]
        return _parity.comparator_compare_accuracy(
            run_results, bool(fail_fast), comparisons, compare_func
        )

    @staticmethod
    def validate(run_results, check_inf=None, check_nan=None, fail_fast=None):
        """Checks every output for NaN (and Inf on request); True when all are valid."""
        return _parity.comparator_validate(
            run_results, bool(check_inf), True if check_nan is None else bool(check_nan),
            bool(fail_fast),
        )


__all__ = [
    "AccuracyResult", "CompareFunc", "Comparator", "DataLoader", "IterationResult",
    "OutputCompareResult", "PostprocessFunc", "RunResults", "TensorMetadata",
]
