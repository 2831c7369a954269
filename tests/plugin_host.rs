//! The plugin host against real plugin files: the standard plugin, a
//! plugin built for another ABI, a plugin that panics or lies on request,
//! files that are not plugins, and a duplicate.

use std::path::PathBuf;

use bg_engine::game::{RulesError, RulesErrorKind::VariantFault};
use bg_engine::{Dice, Seat};
use bg_plugin_host::PluginHost;
use bg_tests::{copy_plugin, library_file_name, plugin_dir, plugin_file};
use bg_variant_api::{Capabilities, Options};

fn faulty(fault: &str) -> Options {
    Options::from([("fault".to_string(), fault.to_string())])
}

#[test]
fn the_standard_plugin_loads_from_its_file_and_describes_itself() {
    let dir = plugin_dir(&[("bg_standard", "standard.so")]);
    let host = PluginHost::new(dir.path());
    let report = host.scan().unwrap();
    assert_eq!(report.loaded.len(), 1, "{:?}", report.skipped);
    let plugin = host.get("standard").unwrap();
    assert_eq!(plugin.version(), env!("CARGO_PKG_VERSION"));
    assert!(plugin.capabilities().contains(Capabilities::CUBE));
    assert!(plugin.capabilities().contains(Capabilities::STANDARD_BOARD));
    let setup_option = &plugin.info().options[0];
    assert_eq!(setup_option.name, "setup");
    assert_eq!(setup_option.allowed_values, ["standard", "nackgammon"]);
}

#[test]
fn a_plugin_built_for_another_abi_major_is_refused_naming_both_versions() {
    let dir = plugin_dir(&[
        ("bg_test_bad_abi", "future.so"),
        ("bg_standard", "standard.so"),
    ]);
    let host = PluginHost::new(dir.path());
    let report = host.scan().unwrap();
    assert_eq!(report.loaded.len(), 1);
    let [skipped] = &report.skipped[..] else {
        panic!("{:?}", report.skipped)
    };
    assert!(skipped.path.ends_with("future.so"));
    let plugin_abi = format!("{}.3", bg_variant_api::abi::ABI_MAJOR + 1);
    let host_abi = format!(
        "{}.{}",
        bg_variant_api::abi::ABI_MAJOR,
        bg_variant_api::abi::ABI_MINOR
    );
    assert!(
        skipped
            .reason
            .contains(&format!("plugin ABI version {plugin_abi}"))
            && skipped
                .reason
                .contains(&format!("host (ABI version {host_abi})")),
        "{}",
        skipped.reason
    );
}

#[test]
fn a_panicking_plugin_returns_an_error_and_the_host_keeps_working() {
    let dir = plugin_dir(&[
        ("bg_test_faulty", "faulty.so"),
        ("bg_standard", "standard.so"),
    ]);
    let host = PluginHost::new(dir.path());
    host.scan().unwrap();
    let faulty_plugin = host.get("faulty").unwrap();
    let dice = Dice::new(3, 1).unwrap();
    let mut plays = Vec::new();

    let game = faulty_plugin.new_game(&faulty("panic")).unwrap();
    for _ in 0..3 {
        let error = faulty_plugin
            .legal_plays(&game.state, Seat::White, dice, &mut plays)
            .unwrap_err();
        assert!(
            matches!(&error, RulesError { kind: VariantFault, message } if message.starts_with("variant faulty failed") && message.contains("panics on purpose")),
            "{error:?}"
        );
        assert_eq!(error.reason(), "VARIANT_FAULT");
    }
    let error = faulty_plugin
        .apply_play(&game.state, Seat::White, dice, &"8/5 6/5".parse().unwrap())
        .unwrap_err();
    assert!(matches!(
        error,
        RulesError {
            kind: VariantFault,
            ..
        }
    ));
    assert_eq!(faulty_plugin.faults(), 4);

    // The same plugin's other games, and every other plugin, go on.
    let sound = faulty_plugin.new_game(&faulty("none")).unwrap();
    faulty_plugin
        .legal_plays(&sound.state, Seat::White, dice, &mut plays)
        .unwrap();
    assert_eq!(plays.len(), 16);
    let standard = host.get("standard").unwrap();
    let game = standard.new_game(&Options::new()).unwrap();
    standard
        .legal_plays(&game.state, Seat::White, dice, &mut plays)
        .unwrap();
    assert_eq!(plays.len(), 16);
    assert_eq!(standard.faults(), 0);
}

/// The host gives a thread's last legal plays again when asked for the
/// same position of the same plugin (an action asks twice). Asked again,
/// after another position, with other dice or for the other seat, the
/// plays are those a thread that never asked before is given; a fault is
/// found again on every call.
#[test]
fn legal_plays_asked_again_are_those_of_a_first_asking() {
    let dir = plugin_dir(&[
        ("bg_standard", "standard.so"),
        ("bg_test_faulty", "faulty.so"),
    ]);
    let host = PluginHost::new(dir.path());
    host.scan().unwrap();
    let standard = host.get("standard").unwrap();
    let start = standard.new_game(&Options::new()).unwrap().state;
    let three_one = Dice::new(3, 1).unwrap();
    let six_four = Dice::new(6, 4).unwrap();
    let after = standard
        .apply_play(&start, Seat::White, three_one, &"8/5 6/5".parse().unwrap())
        .unwrap()
        .state;
    let first_asking = |state: &[u8], seat: Seat, dice: Dice| {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    let mut plays = Vec::new();
                    standard.legal_plays(state, seat, dice, &mut plays).unwrap();
                    plays
                })
                .join()
                .unwrap()
        })
    };
    let askings = [
        (&start, Seat::White, three_one),
        (&start, Seat::White, three_one),
        (&start, Seat::White, six_four),
        (&start, Seat::Black, six_four),
        (&after, Seat::Black, six_four),
        (&start, Seat::White, three_one),
    ];
    let mut plays = Vec::new();
    for (state, seat, dice) in askings {
        standard.legal_plays(state, seat, dice, &mut plays).unwrap();
        assert_eq!(plays, first_asking(state, seat, dice), "{seat:?} {dice:?}");
    }
    assert_ne!(
        first_asking(&start, Seat::White, six_four),
        first_asking(&start, Seat::Black, six_four)
    );

    let faulty_plugin = host.get("faulty").unwrap();
    let game = faulty_plugin.new_game(&faulty("extra_checker")).unwrap();
    for _ in 0..2 {
        let error = faulty_plugin
            .legal_plays(&game.state, Seat::White, three_one, &mut plays)
            .unwrap_err();
        assert!(
            matches!(
                error,
                RulesError {
                    kind: VariantFault,
                    ..
                }
            ),
            "{error:?}"
        );
    }
    assert_eq!(faulty_plugin.faults(), 2);
}

#[test]
fn a_plugin_breaking_an_invariant_gets_a_fault_not_a_corrupt_game() {
    let dir = plugin_dir(&[("bg_test_faulty", "faulty.so")]);
    let host = PluginHost::new(dir.path());
    host.scan().unwrap();
    let plugin = host.get("faulty").unwrap();
    let dice = Dice::new(3, 1).unwrap();
    let mut plays = Vec::new();

    // A 16th checker in every result.
    let game = plugin.new_game(&faulty("extra_checker")).unwrap();
    let error = plugin
        .legal_plays(&game.state, Seat::White, dice, &mut plays)
        .unwrap_err();
    assert!(
        matches!(&error, RulesError { kind: VariantFault, message } if message.contains("16 checkers")),
        "{error:?}"
    );

    // A play accepted whose result is not among the legal plays.
    let game = plugin.new_game(&faulty("accept_anything")).unwrap();
    let error = plugin
        .apply_play(&game.state, Seat::White, dice, &"8/5 6/5".parse().unwrap())
        .unwrap_err();
    assert!(
        matches!(&error, RulesError { kind: VariantFault, message } if message.contains("not one of its legal plays")),
        "{error:?}"
    );
}

/// A variant that declares its names uses only those: a tally it did not
/// declare is a fault of that call (clients could not say what it means).
#[test]
fn a_scoreboard_name_the_variant_did_not_declare_is_a_fault() {
    let dir = plugin_dir(&[("bg_test_faulty", "faulty.so")]);
    let host = PluginHost::new(dir.path());
    host.scan().unwrap();
    let plugin = host.get("faulty").unwrap();
    let game = plugin.new_game(&faulty("none")).unwrap();
    let shown = plugin.scoreboard(&game.state).unwrap().unwrap();
    assert_eq!(shown.tally("moves"), Some([0, 0]));
    let game = plugin.new_game(&faulty("undeclared_name")).unwrap();
    let error = plugin.scoreboard(&game.state).unwrap_err();
    assert!(
        matches!(&error, RulesError { kind: VariantFault, message } if message.contains("\"not_declared\"")),
        "{error:?}"
    );
}

/// A real shared library that is not a plugin: the C maths library.
fn foreign_library() -> PathBuf {
    let candidates = [
        "/lib/x86_64-linux-gnu/libm.so.6",
        "/usr/lib/x86_64-linux-gnu/libm.so.6",
        "/lib/aarch64-linux-gnu/libm.so.6",
        "/usr/lib/aarch64-linux-gnu/libm.so.6",
        "/lib64/libm.so.6",
        "/usr/lib64/libm.so.6",
    ];
    candidates
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .expect("libm.so.6 on this machine")
}

#[test]
fn files_that_are_not_plugins_are_skipped_with_a_reason() {
    let dir = plugin_dir(&[("bg_standard", "standard.so")]);
    std::fs::write(dir.path().join("README.txt"), "not a plugin").unwrap();
    std::fs::write(dir.path().join("garbage.so"), b"\x7fELF but not really").unwrap();
    std::fs::copy(foreign_library(), dir.path().join("libm.so")).unwrap();
    std::fs::create_dir(dir.path().join("subfolder.so")).unwrap();

    let host = PluginHost::new(dir.path());
    let report = host.scan().unwrap();
    assert_eq!(report.loaded.len(), 1);
    let reason = |file: &str| {
        report
            .skipped
            .iter()
            .find(|s| s.path.ends_with(file))
            .map(|s| s.reason.clone())
            .unwrap_or_else(|| panic!("{file} not reported: {:?}", report.skipped))
    };
    assert!(reason("README.txt").contains("not a shared library"));
    assert!(reason("garbage.so").contains("not a loadable library"));
    assert!(reason("libm.so").contains("no `bg_variant_entry` symbol"));
    assert_eq!(
        report.skipped.len(),
        3,
        "folders are not files: {:?}",
        report.skipped
    );
    assert_eq!(host.plugins().len(), 1);
}

/// A plugin is installed by copying it to a hidden name, then renaming
/// it into place: a scan meanwhile looks at neither half a file nor the
/// whole one under its hidden name, and the next scan loads it under its
/// own name.
#[test]
fn a_plugin_copied_in_under_a_hidden_name_is_loaded_once_renamed() {
    let dir = plugin_dir(&[("bg_standard", "standard.so")]);
    let whole = std::fs::read(plugin_file("bg_plakoto")).unwrap();
    std::fs::write(dir.path().join(".caucasian.so.partial"), &whole[..4096]).unwrap();
    let hidden = dir.path().join(".plakoto.so.partial");
    std::fs::write(&hidden, &whole).unwrap();

    let host = PluginHost::new(dir.path());
    let report = host.scan().unwrap();
    assert_eq!(report.loaded.len(), 1);
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    assert!(host.get("plakoto").is_none());

    std::fs::rename(&hidden, dir.path().join("plakoto.so")).unwrap();
    let report = host.scan().unwrap();
    assert!(report.skipped.is_empty(), "{:?}", report.skipped);
    let [plakoto] = &report.loaded[..] else {
        panic!("{:?}", report.loaded)
    };
    assert!(plakoto.path().ends_with("plakoto.so"));
    assert_eq!(host.plugins().len(), 2);
}

#[test]
fn a_second_plugin_with_the_same_name_is_refused() {
    let dir = plugin_dir(&[
        ("bg_standard", "a-standard.so"),
        ("bg_standard", "b-standard.so"),
    ]);
    let host = PluginHost::new(dir.path());
    let report = host.scan().unwrap();
    assert_eq!(report.loaded.len(), 1);
    assert!(report.loaded[0].path().ends_with("a-standard.so"));
    let [skipped] = &report.skipped[..] else {
        panic!("{:?}", report.skipped)
    };
    assert!(skipped.path.ends_with("b-standard.so"));
    assert!(
        skipped
            .reason
            .contains("variant `standard` is already loaded from")
            && skipped.reason.contains("a-standard.so"),
        "{}",
        skipped.reason
    );
}

#[test]
fn scanning_again_loads_only_new_files() {
    let dir = plugin_dir(&[("bg_standard", "standard.so")]);
    let host = PluginHost::new(dir.path());
    assert_eq!(host.scan().unwrap().loaded.len(), 1);
    assert_eq!(host.scan().unwrap().loaded.len(), 0);
    copy_plugin(
        "bg_test_faulty",
        &dir.path().join(library_file_name("bg_test_faulty")),
    );
    let report = host.scan().unwrap();
    assert_eq!(report.loaded.len(), 1);
    assert_eq!(report.loaded[0].name(), "faulty");
    assert_eq!(host.plugins().len(), 2);
    assert!(plugin_file("bg_standard").is_file());
}

#[test]
fn a_missing_plugin_folder_is_an_error() {
    let host = PluginHost::new("/nonexistent/plugins");
    assert!(host.scan().is_err());
}

#[test]
fn plugins_load_from_several_folders_and_the_first_folder_wins_a_name_clash() {
    let shipped = plugin_dir(&[("bg_standard", "standard.so")]);
    let extra = plugin_dir(&[("bg_standard", "standard.so"), ("bg_plakoto", "plakoto.so")]);
    let host = PluginHost::with_dirs([shipped.path().to_path_buf(), extra.path().to_path_buf()]);
    let report = host.scan().unwrap();
    let mut names: Vec<&str> = report.loaded.iter().map(|p| p.name()).collect();
    names.sort();
    assert_eq!(names, ["plakoto", "standard"]);
    assert!(
        host.get("standard")
            .unwrap()
            .path()
            .starts_with(shipped.path())
    );
    let [skipped] = &report.skipped[..] else {
        panic!("{:?}", report.skipped)
    };
    assert!(skipped.path.starts_with(extra.path()));
    assert!(
        skipped.reason.contains("already loaded from"),
        "{}",
        skipped.reason
    );

    // A folder that cannot be read is reported; the others are scanned.
    let host = PluginHost::with_dirs(["/nonexistent/extra".into(), extra.path().to_path_buf()]);
    let report = host.scan().unwrap();
    let [unreadable] = &report.unreadable[..] else {
        panic!("{:?}", report.unreadable)
    };
    assert!(
        unreadable.reason.contains("/nonexistent/extra"),
        "{}",
        unreadable.reason
    );
    assert_eq!(report.loaded.len(), 2);
}

#[test]
fn a_loaded_plugin_file_changed_on_disk_is_not_reloaded() {
    let dir = plugin_dir(&[("bg_standard", "standard.so")]);
    let host = PluginHost::new(dir.path());
    assert_eq!(host.scan().unwrap().loaded.len(), 1);
    // Replace the file (a new file moved over the old name).
    copy_plugin("bg_test_faulty", &dir.path().join("standard.so"));
    let report = host.scan().unwrap();
    assert!(report.loaded.is_empty());
    let [skipped] = &report.skipped[..] else {
        panic!("{:?}", report.skipped)
    };
    assert!(
        skipped.reason.contains("changed on disk"),
        "{}",
        skipped.reason
    );
    // The loaded library keeps working.
    let standard = host.get("standard").unwrap();
    let game = standard.new_game(&Options::new()).unwrap();
    let mut plays = Vec::new();
    standard
        .legal_plays(
            &game.state,
            Seat::White,
            Dice::new(6, 5).unwrap(),
            &mut plays,
        )
        .unwrap();
    assert!(host.get("faulty").is_none());
}
