"""Zoom movies' paths and exponential-map keyframes: drawn, sampled, assembled, judged."""
