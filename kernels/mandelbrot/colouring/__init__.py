"""Values to RGBA on either backend: the mappings, the Colourer, the overlays' layers."""
