"""Qt-free view models: each view's state and commands, tested without Qt"""
