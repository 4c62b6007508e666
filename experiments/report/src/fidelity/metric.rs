//! One number of the physical-fidelity study, as every section of the report builds it: a
//! row of `metrics.csv`, and the formulation and friction model that a peer engine's
//! configuration names.

/// One number of the study: a row of `metrics.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct Metric {
    /// The scene (`sliding_cube`, `slope_15`, ...).
    pub scene: String,
    /// `contactlab`, `mujoco` or `drake`.
    pub engine: String,
    /// Our formulation, or the peer's configuration family (`elliptic`, `sap`, ...).
    pub formulation: String,
    /// Our optimizer, or the peer's configuration.
    pub optimizer: String,
    /// The friction model.
    pub model: String,
    /// Our driver's label, or the peer's configuration: the key of facts.
    pub label: String,
    /// A scene parameter that tells runs of a sweep apart (the stack's mass ratio, `1e3`);
    /// empty otherwise.
    pub param: String,
    /// The time step (s).
    pub dt: f64,
    /// The metric's name.
    pub metric: String,
    /// Its value.
    pub value: f64,
    /// The exact value, NaN where there is none.
    pub analytic: f64,
}

/// A peer configuration's family and friction model: MuJoCo's cones are regularised (soft
/// constraints); Drake's discrete approximations are compliant point contact, near-rigid in
/// the configurations at `k = 1e12` N/m (`-k1e12`).
pub(super) fn peer_model(engine: &str, config: &str) -> (String, String) {
    match engine {
        "mujoco" => {
            let cone = config.split('-').next().unwrap_or(config).to_string();
            let model = if cone == "pyramidal" {
                "regularized_pyramid"
            } else {
                "regularized_cone"
            };
            (cone, model.into())
        }
        _ => {
            let approximation = config.split('-').next().unwrap_or(config).to_string();
            let model = if config.contains("-k1e12") {
                "near_rigid_point"
            } else {
                "compliant_point"
            };
            (approximation, model.into())
        }
    }
}
