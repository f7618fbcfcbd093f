// A NumPy oracle of the ONNX float8 formats, for the Cast and QuantizeLinear tests: Python
// source defining decode(name) (the value of each of the 256 codes) and
// to_float8(name, x, saturate) (the spec's rounding of float32 values, decoded back).
#pragma once

namespace parity::testing {

// The four float8 formats decoded from their bit patterns, as the spec defines them
// (exponent bias, which codes are NaN/inf, no negative zero for the FNUZ types).
inline constexpr const char* kFloat8Oracle = R"(
FORMATS = {  # name: (exponent bits, mantissa bits, bias, kind)
    'e4m3fn': (4, 3, 7, 'fn'), 'e4m3fnuz': (4, 3, 8, 'fnuz'),
    'e5m2': (5, 2, 15, 'ieee'), 'e5m2fnuz': (5, 2, 16, 'fnuz')}
def decode(name):
    eb, mb, bias, kind = FORMATS[name]
    out = np.empty(256, np.float64)
    for code in range(256):
        s, e, m = code >> 7, (code >> mb) & ((1 << eb) - 1), code & ((1 << mb) - 1)
        v = (m / 2**mb) * 2.0**(1 - bias) if e == 0 else (1 + m / 2**mb) * 2.0**(e - bias)
        if kind == 'fnuz' and code == 0x80: v = np.nan
        elif kind == 'fn' and (code & 0x7F) == 0x7F: v = np.nan
        elif kind == 'ieee' and e == (1 << eb) - 1: v = np.inf if m == 0 else np.nan
        out[code] = -v if s else v
    return out
def to_float8(name, x, saturate):
    # Round to nearest, ties to the even code; a value rounding past the largest finite one
    # saturates to it, or becomes inf (e5m2) / NaN (the others) without saturate.
    table = decode(name)
    codes = [c for c in range(128) if np.isfinite(table[c])]
    mags = np.array([table[c] for c in codes]); top = max(codes)
    mags = np.append(mags, mags[-1] + (mags[-1] - mags[-2])); codes.append(top + 1)
    res = []
    for v in x.astype(np.float64):
        if np.isnan(v): res.append(np.nan); continue
        d = np.abs(mags - abs(v)); best = np.flatnonzero(d == d.min())
        i = best[0] if len(best) == 1 else [b for b in best if codes[b] % 2 == 0][0]
        if codes[i] > top:
            r = mags[-2] if saturate else (np.inf if FORMATS[name][3] == 'ieee' else np.nan)
        else:
            r = mags[i]
        res.append(-r if v < 0 else r)
    return np.array(res, np.float32)
)";

}  // namespace parity::testing
