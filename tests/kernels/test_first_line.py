"""first_line: the one-line summary of an error that every reason shown to a user goes through."""
from kernels.backend import first_line


def test_first_non_empty_line_stripped():
    assert first_line("\n  CUDA driver library cannot be found.\nEnsure that…\n") == \
        "CUDA driver library cannot be found."
    assert first_line(RuntimeError("[700] CUDA_ERROR_ILLEGAL_ADDRESS\ntraceback text")) == \
        "[700] CUDA_ERROR_ILLEGAL_ADDRESS"


def test_a_line_ending_in_a_colon_takes_the_next_one():
    # numba's wording when the driver failed to load: the cause is on the following line
    err = RuntimeError("Error at driver init: \n\nCUDA driver library cannot be found.\nEnsure…:")
    assert first_line(err) == "Error at driver init: CUDA driver library cannot be found."
    assert first_line("only a heading:") == "only a heading:"


def test_empty_messages_still_say_something():
    assert first_line(KeyError()) == "KeyError"
    assert first_line(ValueError("  \n ")) == "ValueError"
    assert first_line("") == "unknown error"
