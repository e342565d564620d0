"""Deep-zoom frames: DeepRenderer, its pixels on CPU or GPU, geometry, sectors, tables ahead."""
