"""The Qt layer of GPU Explorer: main window, views, widgets and the one render worker."""
