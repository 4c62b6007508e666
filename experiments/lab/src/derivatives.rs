//! The derivatives of a solve's answer to its problem's data, by field name, as the Python
//! package and notebooks ask for them (issue 43).
//!
//! The answers of the Coulomb cone (the natural map's pairs, PGS, ADMM) are differentiated
//! through the natural map ([`Sensitivity`], the implicit function theorem at the answer):
//! whichever driver found the answer, the derivative is the model's. A contact-space problem's
//! fields are `q`, `W` and `mu`; a generalized problem's `f`, `w`, `M`, `H` and `mu`
//! ([`GeneralizedSensitivity`], the chain rule through `W = H' M^-1 H`, `q = H' M^-1 f + w`).
//! The outputs are `r` and `u`, and `v` for a generalized problem. Other models (SAP's
//! regularized contact, the pyramid, maximum dissipation) are refused with the reason: not
//! built yet.

use contactlab_core::plugin::Model;
use contactlab_core::{CoreError, StepProblem};
pub use contactlab_formulations::natural_map::sensitivity::generalized::{
    GeneralizedDirection, GeneralizedSensitivity,
};
pub use contactlab_formulations::natural_map::sensitivity::names::{
    GENERALIZED_FIELDS, GENERALIZED_OUTPUTS, LOCAL_FIELDS, LOCAL_OUTPUTS,
};
use contactlab_formulations::natural_map::sensitivity::names::{R, U, V};
pub use contactlab_formulations::natural_map::sensitivity::{LocalDirection, Regime, Sensitivity};

/// One named array: a field's direction or gradient, or an output's tangent or cotangent
/// (matrices row-major).
pub type Named = (&'static str, Vec<f64>);

/// The factored derivatives of one answer.
#[derive(Debug)]
pub enum Derivatives {
    /// Of a contact-space problem (boxed, as the generalized one: both hold dense factors).
    Local(Box<Sensitivity>),
    /// Of a generalized problem (boxed: it holds the contact-space one and the chain rule's
    /// factors).
    Generalized(Box<GeneralizedSensitivity>),
}

impl Derivatives {
    /// Factors the derivatives of `r`, the answer of a solve whose model is `model`, which the
    /// ruler accepts to `tol` (a solve that did not converge is refused: the derivative of a
    /// point that is not an answer means nothing).
    pub fn new(
        step: &StepProblem,
        model: Model,
        r: &[f64],
        tol: f64,
    ) -> Result<Derivatives, CoreError> {
        if model != Model::CoulombCone {
            return Err(CoreError::Unsupported(format!(
                "sensitivities are built for answers of the Coulomb cone (natural map, PGS, \
                 ADMM); this pair solves the {} model",
                model.as_str()
            )));
        }
        let local = Sensitivity::new(step.local()?, r, tol)?;
        Ok(match step.generalized() {
            Some(g) => Derivatives::Generalized(Box::new(GeneralizedSensitivity::new(g, local)?)),
            None => Derivatives::Local(Box::new(local)),
        })
    }

    /// The contact-space sensitivities (regimes, uniqueness).
    pub fn local(&self) -> &Sensitivity {
        match self {
            Derivatives::Local(s) => s,
            Derivatives::Generalized(g) => g.local(),
        }
    }

    /// The fields a direction may name.
    pub fn fields(&self) -> &'static [&'static str] {
        match self {
            Derivatives::Local(_) => &LOCAL_FIELDS,
            Derivatives::Generalized(_) => &GENERALIZED_FIELDS,
        }
    }

    /// The outputs a cotangent may name.
    pub fn outputs(&self) -> &'static [&'static str] {
        match self {
            Derivatives::Local(_) => &LOCAL_OUTPUTS,
            Derivatives::Generalized(_) => &GENERALIZED_OUTPUTS,
        }
    }

    /// A field's shape (`[n]` or `[rows, cols]`), or why the problem has no such field.
    pub fn shape(&self, field: &str) -> Result<Vec<usize>, CoreError> {
        let s = self.local();
        let (m, blocks) = (s.rows(), s.blocks());
        let nv = match self {
            Derivatives::Generalized(g) => g.velocity().len(),
            Derivatives::Local(_) => 0,
        };
        let shape = match (self, field) {
            (_, "mu") => vec![blocks],
            (Derivatives::Local(_), "q") => vec![m],
            (Derivatives::Local(_), "W") => vec![m, m],
            (Derivatives::Generalized(_), "f") => vec![nv],
            (Derivatives::Generalized(_), "w") => vec![m],
            (Derivatives::Generalized(_), "M") => vec![nv, nv],
            (Derivatives::Generalized(_), "H") => vec![nv, m],
            _ => return Err(self.no_field(field)),
        };
        Ok(shape)
    }

    /// An output's length, or why the answer has no such output.
    pub fn output_len(&self, output: &str) -> Result<usize, CoreError> {
        match (self, output) {
            (_, R | U) => Ok(self.local().rows()),
            (Derivatives::Generalized(g), V) => Ok(g.velocity().len()),
            _ => Err(CoreError::BadOption(format!(
                "sensitivity: no output `{output}` (the outputs: {})",
                self.outputs().join(", ")
            ))),
        }
    }

    fn no_field(&self, field: &str) -> CoreError {
        let kind = match self {
            Derivatives::Local(_) => "a contact-space",
            Derivatives::Generalized(_) => "a generalized",
        };
        CoreError::BadOption(format!(
            "sensitivity: {kind} problem has no field `{field}` (its fields: {})",
            self.fields().join(", ")
        ))
    }

    /// Forward mode: the outputs' changes (`r`, `u`, and `v` for a generalized problem) along
    /// a change of the named fields (the others do not move).
    pub fn jvp(&self, direction: &[(&str, &[f64])]) -> Result<Vec<Named>, CoreError> {
        let get = |name: &str| -> Result<Option<&[f64]>, CoreError> {
            let mut found = None;
            for (k, v) in direction {
                self.shape(k)?;
                if *k == name {
                    found = Some(*v);
                }
            }
            Ok(found)
        };
        match self {
            Derivatives::Local(s) => {
                let d = LocalDirection {
                    q: get("q")?,
                    w: get("W")?,
                    mu: get("mu")?,
                };
                let (dr, du) = s.jvp(&d)?;
                Ok(vec![(R, dr), (U, du)])
            }
            Derivatives::Generalized(g) => {
                let d = GeneralizedDirection {
                    f: get("f")?,
                    w: get("w")?,
                    m: get("M")?,
                    h: get("H")?,
                    mu: get("mu")?,
                };
                let t = g.jvp(&d)?;
                Ok(vec![(R, t.r), (U, t.u), (V, t.v)])
            }
        }
    }

    /// Reverse mode: the gradient, for every field, of `sum <ō, o>` over the named outputs'
    /// cotangents (outputs left out count as zero).
    pub fn vjp(&self, cotangent: &[(&str, &[f64])]) -> Result<Vec<Named>, CoreError> {
        let mut bars: Vec<Vec<f64>> = Vec::new();
        for out in self.outputs() {
            bars.push(vec![0.0; self.output_len(out)?]);
        }
        for (k, v) in cotangent {
            let len = self.output_len(k)?;
            if v.len() != len {
                return Err(CoreError::BadOption(format!(
                    "sensitivity: the cotangent of `{k}` has {} entries, the answer {len}",
                    v.len()
                )));
            }
            let at = self.outputs().iter().position(|o| o == k).unwrap_or(0);
            bars[at].copy_from_slice(v);
        }
        match self {
            Derivatives::Local(s) => {
                let g = s.vjp(&bars[0], &bars[1])?;
                Ok(vec![("q", g.q), ("W", g.w), ("mu", g.mu)])
            }
            Derivatives::Generalized(s) => {
                let g = s.vjp(&bars[0], &bars[1], &bars[2])?;
                Ok(vec![
                    ("f", g.f),
                    ("w", g.w),
                    ("M", g.m),
                    ("H", g.h),
                    ("mu", g.mu),
                ])
            }
        }
    }

    /// The dense Jacobian of output `of` with respect to field `wrt`, row-major with one row
    /// per entry of the output (each row the gradient [`Derivatives::vjp`] gives for that
    /// entry's unit cotangent: derivatives with respect to `W` or `M` symmetrized).
    pub fn jacobian(&self, wrt: &str, of: &str) -> Result<Vec<f64>, CoreError> {
        let cols: usize = self.shape(wrt)?.iter().product();
        let rows = self.output_len(of)?;
        let mut out = Vec::with_capacity(rows * cols);
        let mut unit = vec![0.0; rows];
        for i in 0..rows {
            unit[i] = 1.0;
            let g = self.vjp(&[(of, &unit)])?;
            let row = g.into_iter().find(|(k, _)| *k == wrt).map(|(_, v)| v);
            out.extend(row.unwrap_or_default());
            unit[i] = 0.0;
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests;
