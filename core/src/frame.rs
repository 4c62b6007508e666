//! Contact-frame conventions: normal first inside the project; converters for normal last.
