//! The non-planar variant's chain as a kinematic tree of the `multibody` crate.

use contactlab_multibody::{
    Description, InertiaDescription, JointDescription, LinkDescription, Model, RotationDescription,
};

use super::config::PendulumConfig;
use crate::error::SceneError;

/// The chain as a kinematic tree of the `multibody` crate, the pivot at its origin: link `i`
/// hinged at the previous sphere's centre (the pivot for link 0) about `(sin a_i, -cos a_i, 0)` in its parent's frame,
/// `a_i = (-1)^i hinge_skew`, with its sphere's mass and inertia at `(0, 0, -L)`. At
/// `hinge_skew = 0` every axis is `-e_y`, and the tree is the planar chain: a positive `q_i`
/// turns `-z` towards `+x`, as `u(phi)` does.
pub(super) fn chain_model(c: &PendulumConfig) -> Result<Model, SceneError> {
    let links = (0..c.n_links)
        .map(|i| {
            let a = if i % 2 == 0 {
                c.hinge_skew
            } else {
                -c.hinge_skew
            };
            LinkDescription {
                name: format!("link{i}"),
                parent: (i > 0).then(|| format!("link{}", i - 1)),
                joint: JointDescription::Revolute {
                    axis: [a.sin(), -a.cos(), 0.0],
                },
                translation: if i == 0 {
                    [0.0; 3]
                } else {
                    [0.0, 0.0, -c.link_length]
                },
                rotation: RotationDescription::default(),
                mass: c.sphere_mass,
                com: [0.0, 0.0, -c.link_length],
                inertia: InertiaDescription::SolidSphere(c.sphere_radius),
                spheres: Vec::new(),
                boxes: Vec::new(),
            }
        })
        .collect();
    let description = Description {
        name: "pendulum".into(),
        gravity: [0.0, 0.0, -c.gravity],
        links,
    };
    let model = Model::from_description(&description).map_err(|e| SceneError::Param {
        key: "hinge_skew",
        message: format!("the chain's tree does not build: {e}"),
    })?;
    // Links are listed parents first, so body `i` is link `i`.
    debug_assert!((0..c.n_links).all(|i| model.body_index(&format!("link{i}")) == Some(i)));
    Ok(model)
}
