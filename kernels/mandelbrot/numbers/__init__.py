"""Number systems for compiled code: floatexp, double-double, pow2 scaling, MPFR's C API."""
