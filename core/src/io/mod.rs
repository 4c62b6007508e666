//! Problem files: FCLib HDF5 and JSON with the same field names.
