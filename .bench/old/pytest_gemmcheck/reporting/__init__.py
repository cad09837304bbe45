"""Reading the history back: the gemmcheck command and the terminal summary."""
