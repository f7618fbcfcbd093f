"""Layer-wise comparison (C++ ``layerwise/layerwise_comparator.h``): every tensor of the model
compared between a streaming reference and another backend (or saved results), in bounded
memory, with the first divergent node, each node's local error and the HTML report::

    from parity.backend.onnx import OnnxFromPath
    from parity.layerwise import LayerwiseComparator

    run = LayerwiseComparator.run(OnnxFromPath("model.onnx"), other="onnxrt", local_error=True)
    if not run:
        print(run.iterations[0].first_divergence)
    run.report_html("report.html")

It is what ``parity run model.onnx --pluginref --onnxrt --onnx-outputs mark all`` does, and it
logs the same lines.
"""
from parity import _parity


class LayerwiseComparator:
    """Compares two backends tensor by tensor."""

    @staticmethod
    def run(model, other="onnxrt", reference="pluginref", data_loader=None,
            reference_options=None, other_options=None, outputs=None, exclude_outputs=None,
            compare="simple", atol=None, rtol=None, check_error_stat=None, error_quantile=None,
            infinities_compare_equal=False, check_shapes=True, l2_tolerance=None,
            cosine_similarity_threshold=None, psnr_tolerance=None, snr_tolerance=None,
            mark_budget="1G", local_error=False, other_is_first=False):
        """Runs the comparison and returns a ``LayerwiseRun``.

        Args:
            model: A model (onnx.ModelProto, gs Graph, parity.Model) or a loader of one.
            other: The other side: a backend name ("onnxrt", "pluginref", a plugin's) or the
                ``RunResults`` of one runner (loaded from a file saved with mark all).
            reference (str): The streaming side; a backend that can stream (pluginref).
            data_loader: None (Parity's DataLoader), a ``DataLoader`` or any iterable of feeds.
            reference_options, other_options (dict): The backends' options, as for
                :func:`parity.backend.registry.make_runner`.
            outputs (List[str]): The tensors to compare; None compares every tensor.
            exclude_outputs (List[str]): Tensors not to compare.
            compare (str): "simple" (atol/rtol, as CompareFunc.simple), "distance" or "quality".
            atol, rtol, check_error_stat, error_quantile, l2_tolerance,
            cosine_similarity_threshold, psnr_tolerance, snr_tolerance: A value, or a dict
                {tensor: value} with "" for the default, as for CompareFunc.
            mark_budget (int or str): Bytes held and fetched at once: 1073741824, "512M", "1G".
            local_error (bool): Re-run each node on the reference with the other side's inputs.
            other_is_first (bool): The other side is the first runner (out0).
        """
        from parity.backend import _models

        return _parity.layerwise_compare(
            _models.model_loader(model), reference, dict(reference_options or {}),
            other if isinstance(other, _parity.RunResults) else str(other),
            dict(other_options or {}), data_loader,
            None if outputs is None else list(outputs),
            None if exclude_outputs is None else list(exclude_outputs), compare, atol, rtol,
            check_error_stat, error_quantile, infinities_compare_equal, check_shapes,
            l2_tolerance, cosine_similarity_threshold, psnr_tolerance, snr_tolerance,
            _parity.parse_byte_size("mark_budget", mark_budget), local_error, other_is_first)


__all__ = ["LayerwiseComparator"]
