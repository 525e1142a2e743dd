"""Release wheels: cibuildwheel hooks (before_build.py, smoke.py) and the local path behind `tox -e wheel`
(local.py: build, repair as CI does, check the metadata, install in a fresh venv, smoke test)."""
