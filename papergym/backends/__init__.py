"""Every model in the loop, behind one-method Protocols (`papergym.backends.protocols`)."""
