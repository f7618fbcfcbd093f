"""Parsing command-line values as Polygraphy's ``polygraphy.tools.args.util`` does:
"key:value" lists, "name:shape:dtype" metadata, byte sizes, "script.py:func"."""
import os

from parity import util
from parity.common import TensorMetadata
from parity.logger import G_LOGGER


def cast(val):
    """A command-line string as int, float, str, or a list of these ("[1,2]")."""
    val = str(val).strip()
    if val.strip("[]") != val:
        return [cast(elem) for elem in val.strip("[]").split(",")]
    for convert in (int, float):
        try:
            return convert(val)
        except ValueError:
            pass
    return val.strip("\"'")


def get(args, attr, default=None):
    """The attribute `attr` of parsed arguments, or `default`."""
    return util.try_getattr(args, attr, default)


def datatype_from_str(dt_str):
    """The DataType named by a string ("float32", "int64", ...)."""
    from parity.datatype import DataType

    for entry in DataType.__members__.values():
        if entry.name == str(dt_str).lower():
            return entry
    G_LOGGER.critical(
        f"failed to parse data type '{dt_str}': unknown type; valid choices are "
        f"{[e.name for e in DataType.__members__.values()]}"
    )


def parse_arglist_to_tuple_list(arg_lst, cast_to=None, sep=None, allow_empty_key=None,
                                treat_missing_sep_as_val=None, treat_unspecified_as_none=None):
    """["k1:v1", "v2"] -> [("k1", v1), ("", v2)] (the last `sep`, default ":", splits);
    None for None."""
    sep = util.default(sep, ":")
    cast_to = util.default(cast_to, cast)
    allow_empty_key = util.default(allow_empty_key, True)
    treat_missing_sep_as_val = util.default(treat_missing_sep_as_val, True)
    if arg_lst is None:
        return None
    pairs = []
    for arg in arg_lst:
        key, found, val = arg.rpartition(sep)
        if not found and not treat_missing_sep_as_val:
            key, val = val, key
        if not key and not allow_empty_key:
            G_LOGGER.critical(
                f"Could not parse argument: {arg}. Expected an argument in the format: "
                f"`key{sep}value`.\n"
            )
        val = cast_to(val)
        if treat_unspecified_as_none:
            key, val = key or None, val or None
        pairs.append((key, val))
    return pairs


def parse_arg_to_tuple(arg, cast_to=None, sep=None, allow_empty_key=None,
                       treat_missing_sep_as_val=None, treat_unspecified_as_none=None):
    """One argument of parse_arglist_to_tuple_list; None for None."""
    if arg is None:
        return None
    return parse_arglist_to_tuple_list([arg], cast_to, sep, allow_empty_key,
                                       treat_missing_sep_as_val, treat_unspecified_as_none)[0]


def parse_arglist_to_dict(arg_lst, cast_to=None, sep=None, allow_empty_key=None,
                          treat_missing_sep_as_val=None, treat_unspecified_as_none=None):
    """parse_arglist_to_tuple_list as a dict; None for None."""
    pairs = parse_arglist_to_tuple_list(arg_lst, cast_to, sep, allow_empty_key,
                                        treat_missing_sep_as_val, treat_unspecified_as_none)
    return None if pairs is None else dict(pairs)


def parse_script_and_func_name(arg, default_func_name=None):
    """"script.py:func" -> ("script.py", "func"); "script.py" -> ("script.py",
    default_func_name); None -> (None, None)."""
    if arg is None:
        return None, None
    drive, rest = os.path.splitdrive(arg)
    script, func = parse_arg_to_tuple(rest, cast_to=str, treat_missing_sep_as_val=False,
                                      treat_unspecified_as_none=True)
    return drive + script, util.default(func, default_func_name)


def parse_meta(meta_args, includes_shape=True, includes_dtype=True):
    """["name:[1,3]:float32", ...] -> TensorMetadata (shape and dtype may be "auto")."""
    meta = TensorMetadata()
    for meta_arg in meta_args:
        rest, shape, dtype = meta_arg, None, None

        def pop(convert):
            nonlocal rest
            rest, _, val = rest.rpartition(":")
            val = cast(val.strip())
            if isinstance(val, str) and val.lower() == "auto":
                return None
            return convert(val)

        if includes_dtype:
            dtype = pop(datatype_from_str)
        if includes_shape:
            shape = pop(lambda s: tuple(e for e in s if e != ""))
        meta.add(rest, dtype=dtype, shape=shape)
    return meta


def parse_num_bytes(num_bytes_arg):
    """"16M" -> 16777216 (K, M, G are KiB, MiB, GiB; scientific notation works); None for
    None."""
    if num_bytes_arg is None:
        return None
    text, multiplier = str(num_bytes_arg), 1
    for suffix, mult in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if text.upper().endswith(suffix):
            text, multiplier = text[:-1], mult
            break
    try:
        return int(float(text) * multiplier)
    except ValueError:
        G_LOGGER.critical(
            f"Could not convert {num_bytes_arg} to a number of bytes. Please use either an "
            f"integer (e.g. 16000000), scientific notation (e.g. 16e6), or a number with a "
            f"valid suffix: K, M, or G (e.g. 16M)."
        )


def parse_path(path, name):
    """The path made absolute when it exists (else unchanged, with an error logged)."""
    if path is None:
        return None
    if os.path.exists(path):
        return os.path.abspath(path)
    G_LOGGER.error(f"{name} path: {path} does not exist.")
    return path
