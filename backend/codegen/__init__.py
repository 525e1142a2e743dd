"""Code generators run by the build (setup.py) and checked by the tests: see gen_elementwise.py."""
