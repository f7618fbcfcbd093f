"""The figures of CompareFunc.simple's errors, as Polygraphy names and lays them out.

- Heatmaps (``save_heatmaps`` / ``--save-heatmaps DIR``): the absolute and the relative error
  of an output as images, one per 2-D slice (the last two axes; an output of fewer axes is
  one image), up to 14 x 7 slices a figure, saved as
  ``DIR/<Absolute|Relative> Error | <output>[ (Log Scale)]: <first slice> to <last slice>.svg``.
- The error metrics plot (``save_error_metrics_plot`` / ``--save-error-metrics-plot DIR``):
  both errors of every element against the magnitude of the second output, saved as
  ``DIR/error_metrics_<output>.png``.

File names replace the path separator by "_", as Polygraphy's do; an iteration or runner pair
after the first writes the same names again (Polygraphy's names carry neither), which is
logged as a warning.

Where Polygraphy fails, these draw: a slice taller than 1080 or wider than 1920 elements gets a
figure of its own (Polygraphy divides by zero), a relative error whose minimum is 0 is drawn on
a log scale from its smallest positive value with zeros in the colour of missing values
(Polygraphy's LogNorm raises "Invalid vmin or vmax"), the log-scale suffix is added once per
figure (Polygraphy's second figure of an output reads "(Log Scale) (Log Scale)"), and an empty
output draws nothing. Very large slices are drawn as the maximum over blocks of elements, and
very large outputs plot a sample of their points that keeps the largest errors, each said in
the log.

Only NumPy and matplotlib (Debian's python3-matplotlib) are used, imported when the first
figure is drawn. ``python3 -m parity.comparator.error_plots`` serves ``parity run``, which does
not link Python: one JSON request a line on stdin (arrays in .npy files), one JSON answer a
line on stdout, with the lines to log.
"""
import json
import math
import os
import sys

# Polygraphy's limits of a heatmap figure.
_MAX_HEIGHT = 1080
_MAX_WIDTH = 1920
_MAX_ROWS = 14
_MAX_COLS = 7
# Parity's: a slice is drawn at most this many elements a side (as block maxima beyond), and a
# scatter plot draws at most this many points.
_MAX_IMAGE_SIDE = 2048
_MAX_POINTS = 1_000_000
_LARGEST_KEPT = 10_000

_NON_INTERACTIVE = {"agg", "cairo", "pdf", "pgf", "ps", "svg", "template"}


class PlotError(Exception):
    """A figure cannot be drawn; ``usage`` when the request itself cannot be honoured."""

    def __init__(self, message, usage=False):
        super().__init__(message)
        self.usage = usage


def _matplotlib(show):
    """matplotlib, with a backend that can show figures when `show` is asked for."""
    try:
        import matplotlib
    except ImportError as err:
        raise PlotError(
            f"failed to import matplotlib to draw the error figures: {err}; install Debian's "
            f"python3-matplotlib (scripts/install-deps.sh)"
        ) from err
    if show:
        import matplotlib.pyplot  # noqa: F401 (selects the backend)

        backend = matplotlib.get_backend().lower()
        if backend in _NON_INTERACTIVE:
            display = os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")
            why = (
                "there is no display ($DISPLAY and $WAYLAND_DISPLAY are not set)"
                if not display
                else "no interactive backend could start (is python3-tk installed?)"
            )
            raise PlotError(
                f"failed to show the error figures: matplotlib's backend is '{backend}', which "
                f"cannot show a window, because {why}; save them as files instead "
                f"(--save-heatmaps DIR, --save-error-metrics-plot DIR)",
                usage=True,
            )
    return matplotlib


def check_available(show=False):
    """Raises PlotError when the figures cannot be drawn (or shown, with `show`)."""
    _matplotlib(show)


def sanitize_filename(name):
    return name.replace(os.path.sep, "_")


def _figure(show, **subplot_args):
    """A figure and its axes: through pyplot only when it is to be shown, so that saving never
    touches the user's pyplot state or needs a display."""
    if show:
        import matplotlib.pyplot as plt

        return plt.subplots(**subplot_args)
    from matplotlib.figure import Figure

    fig = Figure(dpi=subplot_args.pop("dpi", None),
                 constrained_layout=subplot_args.pop("constrained_layout", False))
    return fig, fig.subplots(**subplot_args)


def _show(fig, show):
    if show:
        import matplotlib.pyplot as plt

        plt.show()


def _close(fig, show):
    if show:  # figures made without pyplot need no closing
        import matplotlib.pyplot as plt

        plt.close(fig)


def _finite_range(arr, lo, hi):
    """(lo, hi) when both are finite numbers, else the range of arr's finite values."""
    if lo is not None and hi is not None and math.isfinite(lo) and math.isfinite(hi):
        return float(lo), float(hi)
    import numpy as np

    finite = arr[np.isfinite(arr)]
    if finite.size == 0:
        return 0.0, 1.0
    return float(finite.min()), float(finite.max())


def _block_max(img, fy, fx):
    """The maximum of each fy x fx block of img (NaN where a block has no number)."""
    import warnings

    import numpy as np

    h, w = img.shape
    padded = np.full((math.ceil(h / fy) * fy, math.ceil(w / fx) * fx), np.nan)
    padded[:h, :w] = img
    blocks = padded.reshape(padded.shape[0] // fy, fy, padded.shape[1] // fx, fx)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN blocks stay NaN
        return np.nanmax(blocks, axis=(1, 3))


class ErrorPlots:
    """Draws the figures of one comparison session; `log(severity, indent, message)` receives
    the lines to log ("start", "info", "warning", "verbose"), `indent` levels below the current
    one."""

    def __init__(self, log):
        self._log = log
        self._written = set()  # the files saved in this session

    def _save(self, fig, path, **savefig_args):
        if path in self._written:
            self._log(
                "warning", 1,
                f"Overwriting '{path}', written earlier in this run: Polygraphy's figure names "
                f"name the output only, so a later iteration or runner pair replaces an "
                f"earlier one's",
            )
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        fig.savefig(path, **savefig_args)
        self._written.add(path)

    def heatmaps(self, arr, min_val, max_val, prefix, save_dir=None, show=False,
                 use_lognorm=False):
        """Heatmaps of `arr` (an error of one output), titled and named from `prefix`
        ("Absolute Error | out")."""
        import numpy as np

        matplotlib = _matplotlib(show)
        from matplotlib import colors

        self._log("start", 0, f"Building heatmaps for {prefix}. This may take a while...")
        arr = np.asarray(arr)
        if arr.dtype == bool:
            arr = arr.astype(np.float64)
        if arr.size == 0:
            self._log("warning", 1, f"Nothing to draw for {prefix}: the output is empty")
            return
        shape = list(arr.shape)
        full_shape = [1] * (3 - len(shape)) + shape if len(shape) < 3 else shape
        height, width = full_shape[-2], full_shape[-1]
        images = arr.reshape(-1, height, width)
        count = images.shape[0]
        leading = full_shape[:-2]

        def slice_name(index):
            coord = []
            for dim in reversed(leading):
                coord.insert(0, index % dim)
                index //= dim
            return f"({','.join(map(str, coord))},0:{height},0:{width})"

        rows = max(1, min(_MAX_HEIGHT // height, _MAX_ROWS))
        cols = max(1, min(_MAX_WIDTH // width, _MAX_COLS))
        if count < rows * cols:
            cols = min(count, cols)
            rows = math.ceil(count / cols)
        per_figure = rows * cols

        lo, hi = _finite_range(images, min_val, max_val)
        title_prefix = prefix
        if use_lognorm and lo != hi:
            title_prefix += " (Log Scale)"
            if lo <= 0:
                positive = images[np.isfinite(images) & (images > 0)]
                lo = float(positive.min()) if positive.size else hi
            norm = colors.LogNorm(vmin=lo, vmax=hi) if lo < hi else colors.Normalize(lo, hi)
        else:
            norm = colors.Normalize(vmin=lo, vmax=hi)
        # Missing values (NaN errors, and zeros on a log scale) in a colour plasma lacks.
        cmap = matplotlib.colormaps["plasma"].with_extremes(bad="#00ff7f")

        fy = math.ceil(height / _MAX_IMAGE_SIDE)
        fx = math.ceil(width / _MAX_IMAGE_SIDE)
        if fy > 1 or fx > 1:
            self._log(
                "info", 1,
                f"Slices of {height}x{width} elements are drawn as the maximum of each {fy}x{fx} "
                f"block of elements",
            )

        font = "xx-small"
        for first in range(0, count, per_figure):
            last = min(first + per_figure, count) - 1
            title = f"{title_prefix}: {slice_name(first)} to {slice_name(last)}"
            fig, axs = _figure(show, nrows=rows, ncols=cols, squeeze=False, dpi=200,
                               constrained_layout=True)
            try:
                fig.suptitle(title, fontsize=font)
                shown = None
                for at in range(per_figure):
                    ax = axs[at // cols, at % cols]
                    ax.set_axis_off()
                    index = first + at
                    if index > last:
                        continue
                    img = images[index].astype(np.float64)
                    if fy > 1 or fx > 1:
                        img = _block_max(img, fy, fx)
                    ax.set_title(slice_name(index), fontsize=font)
                    # interpolation "none": one pixel of the saved image per element.
                    shown = ax.imshow(img, cmap=cmap, norm=norm, interpolation="none")
                fig.colorbar(shown, ax=axs, shrink=0.7)
                if save_dir is not None:
                    path = os.path.join(save_dir, f"{sanitize_filename(title)}.svg")
                    self._log("info", 1, f"Saving '{title_prefix}' heatmap to: '{path}'")
                    self._save(fig, path)
                _show(fig, show)
            finally:
                _close(fig, show)

    def error_metrics_plot(self, absdiff, reldiff, reference, min_reldiff, max_reldiff,
                           runner0_name, runner1_name, out0_name, out1_name, save_dir=None,
                           show=False):
        """Both errors of every element against the magnitude of the second output."""
        import numpy as np

        _matplotlib(show)
        from matplotlib.ticker import MaxNLocator

        self._log("start", 0,
                  f"Building error metrics plot for {out0_name}. This may take a while...")
        absdiff = np.asarray(absdiff, dtype=np.float64).ravel()
        reldiff = np.asarray(reldiff, dtype=np.float64).ravel()
        magnitude = np.abs(np.asarray(reference, dtype=np.float64).ravel())
        if absdiff.size == 0:
            self._log("warning", 1, f"Nothing to plot for {out0_name}: the output is empty")
            return
        if absdiff.size > _MAX_POINTS:
            keep = self._sample(absdiff, reldiff)
            self._log(
                "info", 1,
                f"Plotting {keep.size} of {absdiff.size} elements: an even sample and the "
                f"{_LARGEST_KEPT} largest absolute and relative errors",
            )
            absdiff, reldiff, magnitude = absdiff[keep], reldiff[keep], magnitude[keep]

        title = (
            f"Error metrics between output0 and output1\n"
            f"output0: {runner0_name:35} | {out0_name}\noutput1: {runner1_name:35} | {out1_name}"
        )
        fig, axs = _figure(show, nrows=2, sharex=True, constrained_layout=True)
        try:
            fig.suptitle(title, fontsize=7)
            axs[0].scatter(magnitude, absdiff, s=1, rasterized=True)
            axs[0].set_ylabel("Absolute error")
            axs[1].scatter(magnitude, reldiff, s=1, rasterized=True)
            suffix = ""
            positive = reldiff[np.isfinite(reldiff) & (reldiff > 0)]
            if min_reldiff != max_reldiff and positive.size:
                axs[1].set_yscale("log")
                suffix = " (log scale)"
            axs[1].set_xlabel("output1 magnitude")
            axs[1].set_ylabel(f"Relative error{suffix}")
            for ax in axs:
                ax.xaxis.set_major_locator(MaxNLocator(20))
                if ax.get_yscale() == "linear":
                    ax.yaxis.set_major_locator(MaxNLocator(10))
                ax.tick_params(axis="x", labelrotation=90)
                ax.tick_params(axis="both", labelsize=6)
                ax.grid(linestyle="--")
                ax.xaxis.label.set_fontsize(7)
                ax.yaxis.label.set_fontsize(7)
            if save_dir is not None:
                path = os.path.join(save_dir, sanitize_filename(f"error_metrics_{out0_name}.png"))
                self._log("info", 1, f"Saving error metrics plot to: '{path}'")
                # 300 dpi (Polygraphy's 1200 makes 7800 x 5900 pixels and takes seconds).
                self._save(fig, path, dpi=300, bbox_inches="tight")
            _show(fig, show)
        finally:
            _close(fig, show)

    @staticmethod
    def _sample(absdiff, reldiff):
        """Indices of an even sample of the elements plus the largest errors of each kind."""
        import numpy as np

        n = absdiff.size
        step = math.ceil(n / (_MAX_POINTS - 2 * _LARGEST_KEPT))
        picked = [np.arange(0, n, step)]
        for diff in (absdiff, reldiff):
            ordered = np.where(np.isnan(diff), np.inf, diff)
            picked.append(np.argpartition(ordered, n - _LARGEST_KEPT)[n - _LARGEST_KEPT:])
        return np.unique(np.concatenate(picked))


class _ApiErrorPlots(ErrorPlots):
    """The plotter of CompareFunc.simple in Python: lines go to G_LOGGER, errors become
    Parity's exceptions."""

    def __init__(self):
        from parity.logger import G_LOGGER

        def log(severity, indent, text):
            level = {"start": G_LOGGER.START, "info": G_LOGGER.INFO,
                     "warning": G_LOGGER.WARNING, "verbose": G_LOGGER.VERBOSE}[severity]
            with G_LOGGER.indent(indent):
                G_LOGGER.log(text, level)

        super().__init__(log)

    def heatmaps(self, *args, **kwargs):
        with _as_parity_errors():
            super().heatmaps(*args, **kwargs)

    def error_metrics_plot(self, *args, **kwargs):
        with _as_parity_errors():
            super().error_metrics_plot(*args, **kwargs)


class _as_parity_errors:
    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, traceback):
        if isinstance(exc, PlotError):
            from parity._parity import ParityException, ParityUsageError

            raise (ParityUsageError if exc.usage else ParityException)(str(exc)) from exc
        return False


def api_plotter(show=False):
    """The plotter CompareFunc.simple hands the compared arrays to; checks at once that
    matplotlib can draw (and show, with `show`) the figures."""
    with _as_parity_errors():
        check_available(show)
    return _ApiErrorPlots()


def _number(text):
    return float(text) if text is not None else None


def serve(stdin=sys.stdin, stdout=sys.stdout):
    """The child process of `parity run`: answers {"ready": true} (or the error of the
    set-up), then one answer per request, each {"log": [[severity, indent, line], ...]} plus
    "error" (and "usage") when the figure could not be drawn."""
    import numpy as np

    def answer(obj):
        stdout.write(json.dumps(obj) + "\n")
        stdout.flush()

    setup = json.loads(stdin.readline() or "{}")
    try:
        check_available(show=bool(setup.get("show")))
    except PlotError as err:
        answer({"error": str(err), "usage": err.usage})
        return 1
    if not setup.get("show"):
        import matplotlib

        matplotlib.use("Agg")
    answer({"ready": True})

    lines = []
    plots = ErrorPlots(lambda severity, indent, text: lines.append([severity, indent, text]))
    for line in stdin:
        request = json.loads(line)
        lines.clear()
        try:
            arrays = {key: np.load(path, mmap_mode="r") for key, path in request["arrays"].items()}
            if request["kind"] == "heatmaps":
                plots.heatmaps(arrays["diff"], _number(request["min"]), _number(request["max"]),
                               request["prefix"], request.get("save_dir"),
                               bool(request.get("show")), bool(request.get("use_lognorm")))
            else:
                plots.error_metrics_plot(
                    arrays["absdiff"], arrays["reldiff"], arrays["reference"],
                    _number(request["min_reldiff"]), _number(request["max_reldiff"]),
                    request["runner0"], request["runner1"], request["out0"], request["out1"],
                    request.get("save_dir"), bool(request.get("show")),
                )
            answer({"log": lines})
        except PlotError as err:
            answer({"log": lines, "error": str(err), "usage": err.usage})
        except Exception as err:  # reported by parity as the figure's error
            answer({"log": lines, "error": f"{type(err).__name__}: {err}"})
    return 0


if __name__ == "__main__":
    # The answers go to the original stdout alone: anything else printed goes to stderr.
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "w")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.exit(serve(sys.stdin, answers))
