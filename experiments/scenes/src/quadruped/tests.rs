use std::collections::HashMap;

use super::*;
use crate::testing::TestSolver;

fn pgs() -> TestSolver {
    TestSolver::new("coulomb", "pgs", 1e-8, 2000)
}

/// Per step: the problem, the impulses and the solver's iterations.
struct StepLog {
    contacts: usize,
    normal_impulse: f64,
    iterations: u64,
}

/// Runs `steps` steps with PGS, warm-started by contact key as the runner does (every contact
/// here has the same frame, so impulses carry over as they are); one log entry per step.
fn simulate(scene: &mut Quadruped, steps: usize) -> Vec<StepLog> {
    let spec = pgs();
    let mut warm: HashMap<ContactKey, [f64; 3]> = HashMap::new();
    let mut log = Vec::with_capacity(steps);
    for _ in 0..steps {
        let cs = scene.contact_step().unwrap();
        let (r, iterations) = if cs.contacts.is_empty() {
            (Vec::new(), 0)
        } else {
            let start: Vec<f64> = cs
                .contacts
                .iter()
                .flat_map(|c| warm.get(&c.key).copied().unwrap_or([f64::NAN; 3]))
                .collect();
            let s = spec.solve(&cs.problem, Some(&start));
            (s.r, s.iterations)
        };
        warm = cs
            .contacts
            .iter()
            .enumerate()
            .map(|(k, c)| (c.key, [r[3 * k], r[3 * k + 1], r[3 * k + 2]]))
            .collect();
        log.push(StepLog {
            contacts: cs.contacts.len(),
            normal_impulse: (0..cs.contacts.len()).map(|k| r[3 * k]).sum(),
            iterations,
        });
        scene.advance(&cs, &r).unwrap();
    }
    log
}

/// Standing at the nominal crouch under PD control, the robot stays up (placed at 0.537 m,
/// it sags to about 0.533 m), keeps its four feet down, and at rest the ground's
/// normal impulses over one step carry its weight, `sum r_n = m g dt`.
#[test]
fn standing_under_pd_stays_up_and_the_impulses_carry_the_weight() {
    let mut s = Quadruped::new(&QuadrupedConfig::for_task(Task::Stand)).unwrap();
    let mass = s.model().total_mass();
    assert!((mass - 35.0).abs() < 1e-9, "the robot file's 35 kg: {mass}");
    let h0 = s.q()[2];
    assert!((h0 - 0.5366).abs() < 1e-3, "nominal standing height {h0}");
    let log = simulate(&mut s, 1000);
    let h = s.q()[2];
    assert!((0.51..0.545).contains(&h), "base height after 1 s: {h}");
    assert!(
        s.q()[0].abs() < 1e-3 && s.q()[1].abs() < 1e-3,
        "{:?}",
        s.q()
    );
    let last = log.last().unwrap();
    assert_eq!(last.contacts, 4);
    let weight = mass * 9.81 * s.config().dt;
    let rel = (last.normal_impulse - weight) / weight;
    eprintln!(
        "standing: h = {h:.4} m, sum r_n = {:.5} N s vs m g dt = {weight:.5} ({:+.2e}), \
         {} PGS sweeps in the last step, KE {:.2e} J",
        last.normal_impulse,
        rel,
        last.iterations,
        s.kinetic_energy()
    );
    assert!(
        rel.abs() < 0.02,
        "impulses {} vs weight {weight}",
        last.normal_impulse
    );
    assert!(
        s.kinetic_energy() < 1e-3,
        "at rest: KE {}",
        s.kinetic_energy()
    );
    assert!(s.max_penetration() < 1e-3, "{}", s.max_penetration());
}

/// The drop task: free fall at exactly 1 m/s forward until the feet reach the ground (semi-
/// implicit Euler: the base falls `g dt^2 n (n + 1) / 2` in `n` steps, so the feet, 0.467 m
/// up, arrive at step 308), then feet and torso corners touch and, with the paper's
/// activation at gap <= 0, an impact penetrates by about its speed times dt and no more.
#[test]
fn a_dropped_robot_falls_freely_then_lands_with_small_penetration() {
    let mut s = Quadruped::new(&QuadrupedConfig::for_task(Task::Drop)).unwrap();
    assert_eq!(
        s.candidates().len(),
        4 + 8,
        "four feet and eight torso corners"
    );
    let mut first_contact = None;
    let mut torso_touched = false;
    let mut max_pen: f64 = 0.0;
    for k in 0..700 {
        let cs = s.contact_step().unwrap();
        if !cs.contacts.is_empty() && first_contact.is_none() {
            first_contact = Some(k);
            // Up to here: free flight, the forward speed untouched.
            assert!((s.base_velocity().x - 1.0).abs() < 1e-12);
            assert!(
                (s.q()[0] - 0.001 * k as f64).abs() < 1e-9,
                "x = {}",
                s.q()[0]
            );
        }
        torso_touched |= cs
            .contacts
            .iter()
            .any(|c| matches!(c.key, ContactKey::WallPoint { .. }));
        let r = if cs.contacts.is_empty() {
            Vec::new()
        } else {
            pgs().solve(&cs.problem, None).r
        };
        s.advance(&cs, &r).unwrap();
        max_pen = max_pen.max(s.max_penetration());
    }
    eprintln!(
        "drop: first contact at step {first_contact:?}, max penetration {max_pen:.5} m, \
         base at {:.3} m",
        s.q()[2]
    );
    let k = first_contact.expect("the robot lands");
    assert!((306..=311).contains(&k), "first contact at step {k}");
    assert!(torso_touched, "the limp robot lands on its torso too");
    assert!(s.last_contacts() >= 4, "{} contacts", s.last_contacts());
    // The torso arrives at about 4-5 m/s: 4-5 mm in one step, plus drift.
    assert!(
        max_pen > 1e-4 && max_pen < 8e-3,
        "max penetration {max_pen}"
    );
    assert!(s.q()[2] < 0.3, "it lies on the ground: {}", s.q()[2]);
    assert_eq!(s.resets(), 0);
}

/// With a margin, a contact found before touching may close its gap but not cross it
/// (`b_n = gap / dt`): the drop's impacts then stay out of the ground, and what is left is
/// the velocity-level scheme's drift.
#[test]
fn a_speculative_margin_keeps_impacts_out_of_the_ground() {
    let mut s = Quadruped::new(&QuadrupedConfig {
        margin: 0.01,
        ..QuadrupedConfig::for_task(Task::Drop)
    })
    .unwrap();
    let mut max_pen: f64 = 0.0;
    for _ in 0..700 {
        simulate(&mut s, 1);
        max_pen = max_pen.max(s.max_penetration());
    }
    eprintln!("drop with a 1 cm margin: max penetration {max_pen:.5} m");
    assert!(max_pen < 3e-3, "max penetration {max_pen}");
    assert!(s.q()[2] < 0.3, "it landed: {}", s.q()[2]);
}

/// Hang and trot collide with the feet only, drop and random with the torso's corners too
/// (the paper's "maximum possible number of contacts": 4 and 8).
#[test]
fn each_task_collides_with_the_papers_geometry() {
    for (task, n, actuated) in [
        (Task::Hang, 4, false),
        (Task::Drop, 12, false),
        (Task::Random, 12, true),
        (Task::Trot, 4, true),
        (Task::Stand, 4, true),
    ] {
        let s = Quadruped::new(&QuadrupedConfig::for_task(task)).unwrap();
        assert_eq!(s.candidates().len(), n, "{task:?}");
        assert_eq!(task.actuated(), actuated, "{task:?}");
        let tau = s.joint_torques();
        if actuated {
            assert_eq!(tau.len(), 12);
        } else {
            assert!(tau.iter().all(|t| *t == 0.0), "{task:?}: passive joints");
        }
        if task.starts_standing() {
            for c in s.candidates() {
                let g = c.gap + STANDING_OVERLAP;
                assert!(
                    g.abs() < 1e-12,
                    "{task:?}: feet on the ground, gap {}",
                    c.gap
                );
            }
        } else {
            assert_eq!(s.q()[2], 1.0, "{task:?}: released 1 m up");
        }
    }
}

/// The step problem: contact frames normal first (`+z`), `W = J M^-1 J'` and `q = J v* + b`
/// in both forms, `advance` gives `v+ = v* + M^-1 J' r` whose contact velocities are
/// `W r + q`, and a standing robot's free velocities point into the ground.
#[test]
fn the_step_problem_is_the_rigid_contact_problem() {
    let s = Quadruped::new(&QuadrupedConfig::for_task(Task::Stand)).unwrap();
    let cs = s.contact_step().unwrap();
    assert_eq!(cs.contacts.len(), 4);
    for c in &cs.contacts {
        assert_eq!(c.frame.row(0), Vector3::z().transpose(), "normal first, +z");
    }
    let g = cs.problem.generalized().unwrap();
    let derived = g.to_local().unwrap();
    let given = cs.problem.local().unwrap();
    let (w1, w2) = (derived.w.to_dense(), given.w.to_dense());
    for i in 0..12 {
        assert!((derived.q[i] - given.q[i]).abs() < 1e-12);
        for j in 0..12 {
            assert!((w1[(i, j)] - w2[(i, j)]).abs() < 1e-10, "W[{i},{j}]");
            assert_eq!(w2[(i, j)], w2[(j, i)], "symmetric to the last bit");
        }
    }
    // Gravity pulls the feet down: negative free normal velocities of about -g dt.
    for k in 0..4 {
        assert!(given.q[3 * k] < -1e-3, "q_n = {}", given.q[3 * k]);
    }
    // A base moving straight up moves every foot contact along its normal.
    let mut up = DVector::zeros(18);
    up[2] = 1.0;
    let mut u = vec![0.0; 12];
    contactlab_core::generalized::sparse_mul_add(&g.j, up.as_slice(), &mut u);
    for k in 0..4 {
        assert!((u[3 * k] - 1.0).abs() < 1e-12 && u[3 * k + 1].abs() < 1e-12);
    }
    // Any impulses: the advanced velocities' contact velocities are W r + q.
    let r: Vec<f64> = (0..12).map(|i| 0.01 * (i as f64 + 1.0)).collect();
    let expected = given.velocity(&r);
    let mut s2 = s.clone();
    s2.advance(&cs, &r).unwrap();
    let mut u = vec![0.0; 12];
    contactlab_core::generalized::sparse_mul_add(&g.j, s2.v().as_slice(), &mut u);
    for i in 0..12 {
        assert!(
            (u[i] - expected[i]).abs() < 1e-10,
            "{i}: {} vs {}",
            u[i],
            expected[i]
        );
    }
}

/// Runs repeat bit for bit from their seed, and another seed draws other targets.
#[test]
fn runs_repeat_exactly_from_their_seed() {
    let run = |seed: u64| {
        let mut s = Quadruped::new(&QuadrupedConfig {
            seed,
            height: 0.6,
            ..QuadrupedConfig::for_task(Task::Random)
        })
        .unwrap();
        let log = simulate(&mut s, 250);
        assert!(log.iter().any(|l| l.contacts > 0), "it lands within 0.25 s");
        (s.q().clone(), s.v().clone(), s.targets())
    };
    let (a, b, c) = (run(3), run(3), run(4));
    assert_eq!(a, b);
    assert_ne!(a.2, c.2);
    assert_ne!(a.0, c.0);
}

/// The random task's targets: Gaussian about the crouch with the configured variance, new
/// ones every `target_period`, and a reset to the release state every `reset_period`.
#[test]
fn random_targets_have_the_variance_and_the_periods() {
    let cfg = QuadrupedConfig {
        target_period: 0.02,
        reset_period: 0.05,
        ..QuadrupedConfig::for_task(Task::Random)
    };
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let nominal = DVector::from_element(12, 0.3);
    let n = 4000;
    let (mut sum, mut sq) = (0.0, 0.0);
    for _ in 0..n {
        for x in controller::random_targets(&nominal, 2.0, &mut rng).iter() {
            sum += x - 0.3;
            sq += (x - 0.3).powi(2);
        }
    }
    let m = 12.0 * n as f64;
    let (mean, var) = (sum / m, sq / m - (sum / m).powi(2));
    assert!(
        mean.abs() < 0.03 && (var - 2.0).abs() < 0.06,
        "mean {mean}, variance {var}"
    );

    let mut s = Quadruped::new(&cfg).unwrap();
    let q0 = s.q().clone();
    let mut targets = vec![s.targets()];
    let mut resets = Vec::new();
    for k in 1..=120 {
        // Released 1 m up, the feet cannot reach the ground in 0.05 s: no contacts.
        let cs = s.contact_step().unwrap();
        assert!(cs.contacts.is_empty());
        s.advance(&cs, &[]).unwrap();
        if s.targets() != *targets.last().unwrap() {
            targets.push(s.targets());
            resets.push((k, s.resets()));
        }
        if k % 50 == 0 {
            assert_eq!(s.q(), &q0, "step {k}: back at the release state");
            assert_eq!(s.task_time(), 0.0);
        }
    }
    assert_eq!(s.resets(), 2);
    // New targets at steps 20, 40 (period) and 50 (reset), 70, 90, 100, 120.
    let at: Vec<usize> = resets.iter().map(|r| r.0).collect();
    assert_eq!(at, vec![20, 40, 50, 70, 90, 100, 120]);
}

/// The drop resets once the robot has landed and its kinetic energy stays below
/// `rest_energy` for `rest_duration` (here a generous threshold, so right after landing).
#[test]
fn the_drop_resets_at_rest_to_its_release_state() {
    let mut s = Quadruped::new(&QuadrupedConfig {
        height: 0.6,
        rest_energy: 1e6,
        rest_duration: 0.01,
        ..QuadrupedConfig::for_task(Task::Drop)
    })
    .unwrap();
    let q0 = s.q().clone();
    let (mut first, mut reset) = (None, None);
    for k in 0..200 {
        let log = simulate(&mut s, 1);
        if log[0].contacts > 0 && first.is_none() {
            first = Some(k);
        }
        if s.resets() == 1 && reset.is_none() {
            reset = Some(k);
            assert_eq!(s.q(), &q0, "back at the release state");
            assert_eq!(s.base_velocity().x, 1.0, "released at 1 m/s forward again");
        }
        if first.is_none() {
            assert_eq!(s.resets(), 0, "no reset in the air however slow");
        }
    }
    let (first, reset) = (first.expect("it lands"), reset.expect("it resets"));
    // 0.067 m of free fall: 117 steps; at rest for 10 steps counting the landing one.
    assert!(
        (110..=120).contains(&first),
        "first contact at step {first}"
    );
    assert_eq!(reset - first, 9);
    assert_eq!(
        s.resets(),
        1,
        "and falls again without resetting in the air"
    );
}

/// A bad parameter is an error that names it: an unknown task, a non-positive `dt`, a
/// negative `mu`, a robot file that does not load, a start below the ground, unknown keys.
#[test]
fn bad_parameters_are_errors_naming_them() {
    let build = |text: &str| -> Result<Quadruped, SceneError> {
        Quadruped::new(&QuadrupedConfig::from_table(
            &text.parse::<toml::Table>().unwrap(),
        )?)
    };
    let e = build("task = \"gallop\"").unwrap_err().to_string();
    assert!(e.contains("`task`") && e.contains("gallop"), "{e}");
    for (text, key) in [
        ("dt = 0.0", "`dt`"),
        ("dt = -0.001", "`dt`"),
        ("dt = nan", "`dt`"),
        ("mu = -0.1", "`mu`"),
        ("kp = -1.0", "`kp`"),
        ("gait_period = 0.0", "`gait_period`"),
        ("target_variance = -1.0", "`target_variance`"),
        ("margin = -0.001", "`margin`"),
        ("torque_limit = 0.0", "`torque_limit`"),
        ("hfe_amplitude = inf", "`hfe_amplitude`"),
        ("task = \"drop\"\nheight = 0.3", "`height`"),
        ("robot = \"no/such/robot.toml\"", "`robot`"),
        ("taks = \"hang\"", "taks"),
        ("dt = \"fast\"", "`dt`"),
    ] {
        let e = build(text).map(|_| ()).unwrap_err().to_string();
        assert!(e.contains(key), "{text}: {e}");
    }
    // Impulses that do not fit the step.
    let mut s = build("task = \"stand\"").unwrap();
    let cs = s.contact_step().unwrap();
    let e = s.advance(&cs, &[0.0; 3]).unwrap_err().to_string();
    assert!(e.contains("expected 12"), "{e}");
    let e = s.advance(&cs, &[f64::NAN; 12]).unwrap_err().to_string();
    assert!(e.contains("impulses"), "{e}");
}

/// The trot moves the base forward: over 2 s (four gait cycles) its mean forward speed is
/// positive and it stays up on alternating diagonal pairs.
#[test]
fn the_trot_moves_the_base_forward() {
    let mut s = Quadruped::new(&QuadrupedConfig::for_task(Task::Trot)).unwrap();
    let log = simulate(&mut s, 2000);
    let speed = s.mean_forward_speed();
    let pairs = log.iter().filter(|l| l.contacts == 2).count();
    let max_it = log.iter().map(|l| l.iterations).max().unwrap_or(0);
    eprintln!(
        "trot: mean forward speed {speed:.3} m/s over {:.1} s, base at {:.3} m, {pairs} of 2000 \
         steps on two feet, up to {max_it} PGS sweeps",
        s.task_time(),
        s.q()[2]
    );
    assert!(speed > 0.1, "mean forward speed {speed}");
    assert!(s.q()[2] > 0.45, "still up: {}", s.q()[2]);
    assert!(pairs > 600, "{pairs} steps on a diagonal pair");
    assert!(
        s.q()[1].abs() < 0.2 * s.q()[0],
        "mostly straight: {:?}",
        s.q()
    );
}

/// The two dominance measures on a hand-made `W`: one contact `W_aa = [[2, 1, 0], [1, 3, 0],
/// [0, 0, 4]]` has scalar dominance `min(2/1, 3/1, 4/0) = 2` and infinite block dominance;
/// two such contacts coupled by `W_ab = I / 2` have scalar dominance `2 / 1.5` (the first row)
/// and block dominance `lambda_min(W_aa) / ||W_ab||_2 = ((5 - sqrt 5) / 2) / 0.5`.
#[test]
fn dominance_measures_of_a_known_matrix() {
    let w = Matrix3::new(2.0, 1.0, 0.0, 1.0, 3.0, 0.0, 0.0, 0.0, 4.0);
    assert_eq!(row_dominance(&[w], 1), 2.0);
    assert!(block_dominance(&[w], 1).is_infinite());
    let off = Matrix3::identity() * 0.5;
    let blocks = [w, off, off, w];
    assert!((row_dominance(&blocks, 2) - 4.0 / 3.0).abs() < 1e-12);
    let lambda_min = (5.0 - 5f64.sqrt()) / 2.0;
    assert!((block_dominance(&blocks, 2) - lambda_min / 0.5).abs() < 1e-9);
    assert!(row_dominance(&[], 0).is_nan() && block_dominance(&[], 0).is_nan());
}

/// `torso_collides` overrides the task: the random task with the torso off has only the four
/// feet as candidates, and with it on (its default) the torso's eight corners as well.
#[test]
fn torso_collides_overrides_the_task() {
    let mut cfg = QuadrupedConfig::for_task(Task::Random);
    assert_eq!(Quadruped::new(&cfg).unwrap().candidates().len(), 12);
    cfg.torso_collides = Some(false);
    assert_eq!(Quadruped::new(&cfg).unwrap().candidates().len(), 4);
}

/// The raibert trot runs: after the command's ramp (2.5 s) the robot keeps its base above
/// 0.4 m, at most four contacts, and moves forward at more than 1 m/s over the last half
/// second (the report measures the steady speed over 5 s in release builds).
#[test]
fn raibert_trot_runs_forward_and_stays_up() {
    let cfg = QuadrupedConfig {
        trot_controller: TrotController::Raibert,
        ..QuadrupedConfig::for_task(Task::Trot)
    };
    let mut s = Quadruped::new(&cfg).unwrap();
    let log = simulate(&mut s, 2500);
    let x0 = s.q()[0];
    let log2 = simulate(&mut s, 500);
    let speed = (s.q()[0] - x0) / 0.5;
    assert!(speed > 1.0, "speed over 2.5-3 s: {speed}");
    assert!(s.q()[2] > 0.4, "base height {}", s.q()[2]);
    assert!(log.iter().chain(&log2).all(|l| l.contacts <= 4));
    assert!(s
        .observables()
        .iter()
        .any(|(k, v)| *k == "max_joint_torque" && *v <= 40.0));
}
