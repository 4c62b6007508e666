//! The errors every reader of problem files gives: a [`CoreError::File`] that names the file
//! and, when one is at fault, the field.

use std::path::Path;

use crate::error::{CoreError, ProblemError};

/// A [`CoreError::File`] for `path`, optionally naming the field at fault.
pub(crate) fn file_error(
    path: &Path,
    field: Option<&str>,
    message: impl Into<String>,
) -> CoreError {
    CoreError::File {
        path: path.to_path_buf(),
        field: field.map(str::to_string),
        message: message.into(),
    }
}

/// A validation error of the data of `path`, as a [`CoreError::File`] naming its field.
pub(crate) fn problem_error(path: &Path, e: ProblemError) -> CoreError {
    let field = match &e {
        ProblemError::Shape { field, .. }
        | ProblemError::NonFinite { field, .. }
        | ProblemError::NotSymmetric { field, .. }
        | ProblemError::NotPositive { field, .. }
        | ProblemError::TooLarge { field, .. } => field.clone(),
        ProblemError::NegativeFriction { .. } => "mu".to_string(),
        ProblemError::BadConstraint { .. } => "constraints".to_string(),
    };
    let text = e.to_string();
    let prefix = format!("field `{field}`: ");
    let message = text.strip_prefix(&prefix).unwrap_or(&text).to_string();
    file_error(path, Some(&field), message)
}
