"""Float64 and float32 frames under Renderer: CPU and GPU targets, work count, preview, warm."""
