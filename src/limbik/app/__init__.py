"""Programs built on the library: the ``limbik`` command line, the batch runner over
folders of clips (local processes or Dask), the demo gallery, compiling kernels ahead of
use, and the Blender add-on. Nothing in the library imports from here."""
