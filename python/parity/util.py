"""Small helpers of Polygraphy's ``polygraphy.util`` that scripts written for Polygraphy use:
defaults and per-name values, sequences, shapes, files, text."""
import fnmatch
import math
import os

from parity import constants
from parity.logger import G_LOGGER


def default(value, default):
    """`value`, or `default` when value is None."""
    return default if value is None else value


def value_or_from_dict(obj, key, default=None):
    """A per-name value: `obj` itself unless it is a dict, else obj[key], else obj[""] (the
    default entry), else `default`."""
    if not isinstance(obj, dict):
        return obj
    if key in obj:
        return obj[key]
    return obj.get("", default)


def is_sequence(obj):
    """Iterable and not a dict, set or str."""
    return hasattr(obj, "__iter__") and not isinstance(obj, (dict, set, str))


def unique_list(sequence):
    """The elements of `sequence` without repeats, in their first order."""
    return list(dict.fromkeys(sequence))


def invert_dict(dct):
    return {value: key for key, value in dct.items()}


def unpack_args(args, num):
    """The first `num` elements of `args` (one value counts as a tuple of it), padded with
    None."""
    args = tuple(args) if is_sequence(args) else (args,)
    return (args + (None,) * num)[:num]


def invoke_if_callable(func, *args, **kwargs):
    """(func(*args, **kwargs), True) for a callable, else (func, False)."""
    if callable(func):
        return func(*args, **kwargs), True
    return func, False


def is_nan(obj):
    return isinstance(obj, float) and math.isnan(obj)


def is_inf(obj):
    return isinstance(obj, float) and math.isinf(obj)


def find_str_in_iterable(name, seq, index=None):
    """`name` if it is in `seq`, else the element at `index` (when given and in range), else
    None."""
    if name in seq:
        return name
    if index is not None and 0 <= index < len(seq):
        return list(seq)[index]
    return None


def check_sequence_contains(sequence, items, name=None, items_name=None, log_func=None,
                            check_missing=True, check_extra=True):
    """Logs (an error by default) the items missing from `sequence` and the extra ones;
    returns (missing, extra)."""
    log_func = default(log_func, G_LOGGER.error)
    sequence, items = list(sequence), list(items)
    missing = [i for i in items if i not in sequence] if check_missing else []
    extra = [s for s in sequence if s not in items] if check_extra else []
    name = default(name, "the sequence")
    items_name = default(items_name, "items")
    if missing:
        log_func(f"The following {items_name} are missing from {name}: {missing}")
    if extra:
        log_func(f"Extra {items_name} in {name}: {extra}")
    return missing, extra


def is_dimension_dynamic(dim):
    return dim is None or not isinstance(dim, int) or dim < 0


def num_dynamic_dimensions(shape):
    return sum(1 for dim in shape if is_dimension_dynamic(dim))


def is_shape_dynamic(shape):
    return num_dynamic_dimensions(shape) > 0


def is_valid_shape_override(new_shape, original_shape):
    return len(new_shape) == len(original_shape) and all(
        o == n or is_dimension_dynamic(o) for o, n in zip(original_shape, new_shape)
    )


def override_dynamic_shape(shape, default_shape_value=None):
    value = default(default_shape_value, constants.DEFAULT_SHAPE_VALUE)
    return [value if is_dimension_dynamic(d) else d for d in shape]


def volume(obj):
    """The product of the elements (1 for an empty shape)."""
    result = 1
    for elem in obj:
        result *= elem
    return result


def is_empty_shape(shape):
    return volume(shape) == 0


def contains_wildcard(target):
    return any(ch in target for ch in "*?[]!")


def match_keys(keys, targets):
    """Matches `keys` (which may hold fnmatch wildcards) to `targets`: returns ({target: key},
    [keys that matched nothing])."""
    matched, target_to_key = set(), {}
    for key in keys:
        for target in targets:
            if fnmatch.fnmatchcase(target, key):
                matched.add(key)
                target_to_key[target] = key
    return target_to_key, [k for k in keys if k not in matched]


def indent_block(block, level=1):
    """The text with every line indented by `level` tabs of 4 spaces."""
    tab = constants.TAB * level
    return tab + f"\n{tab}".join(str(block).splitlines())


def make_repr(type_str, *args, **kwargs):
    """("Type(arg, key=value, ...)", whether every argument was left at None)."""
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items() if v is not None]
    all_none = all(a is None for a in args) and all(v is None for v in kwargs.values())
    return f"{type_str}({', '.join(parts)})", all_none


def sanitize_filename(path):
    return str(path).replace(os.path.sep, "_")


def makedirs(path):
    """Creates the folder that will hold the file `path`."""
    folder = os.path.dirname(str(path))
    if folder:
        os.makedirs(folder, exist_ok=True)


def add_file_suffix(path, suffix):
    """"a/b.onnx" with suffix "_x" -> "a/b_x.onnx"."""
    root, ext = os.path.splitext(str(path))
    return f"{root}{suffix}{ext}"


def get_file_size(src):
    if hasattr(src, "fileno"):
        return os.fstat(src.fileno()).st_size
    return os.path.getsize(str(src))


def _is_file_like(obj):
    return hasattr(obj, "read") or hasattr(obj, "write")


def load_file(src, mode="rb", description=None):
    """The contents of a path or file-like object (a file-like object's position is kept)."""
    if description is not None:
        G_LOGGER.info(f"Loading {description} from {src}")
    if _is_file_like(src):
        position = src.tell() if src.seekable() else None
        if position is not None:
            src.seek(0)
        contents = src.read()
        if position is not None:
            src.seek(position)
        return contents
    with open(src, mode) as f:
        return f.read()


def save_file(contents, dest, mode="wb", description=None):
    """Writes `contents` to a path (its folder is created) or file-like object; returns dest."""
    if description is not None:
        G_LOGGER.info(f"Saving {description} to {dest}")
    if _is_file_like(dest):
        dest.write(contents)
        dest.flush()
        return dest
    makedirs(dest)
    with open(dest, mode) as f:
        f.write(contents)
    return dest


def getattr_nested(obj, attr):
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


def try_getattr(obj, attr, default=None):
    try:
        return getattr_nested(obj, attr)
    except AttributeError:
        return default


class TempAttrChange:
    """Sets attributes of an object for the duration of a `with` block."""

    def __init__(self, obj, changes):
        self.obj = obj
        self.changes = {k: v for k, v in changes.items() if v is not None}
        self.old = {}

    def __enter__(self):
        for key, value in self.changes.items():
            self.old[key] = getattr(self.obj, key)
            setattr(self.obj, key, value)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        for key, value in self.old.items():
            setattr(self.obj, key, value)
