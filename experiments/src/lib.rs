//! Scenes, configs, runner, reports and the CLI.
