use super::*;

fn parse(s: &str) -> Expression {
    parse_expression(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn canonical(s: &str) -> String {
    parse(s).to_string()
}

fn err(s: &str) -> ParseError {
    match parse_expression(s) {
        Ok(e) => panic!("{s} parsed as {e}"),
        Err(e) => e,
    }
}

fn event(e: EventName) -> Expression {
    Expression::Event(e)
}

#[test]
fn every_event_name_parses_in_any_case() {
    for name in EventName::ALL {
        let text = name.as_str();
        assert_eq!(parse(text), Expression::Event(name));
        assert_eq!(parse(&text.to_lowercase()), Expression::Event(name));
        assert_eq!(parse(&text.to_uppercase()), Expression::Event(name));
    }
    assert_eq!(EventName::ALL.len(), 26);
    assert_eq!(EventName::CheckIn.message_type(), Some("CheckIn"));
    assert_eq!(EventName::MissedCheckIn.message_type(), None);
    assert_eq!(parse("tamper"), event(EventName::Tamper));
    assert_eq!(parse("LOWBATTERY"), event(EventName::LowBattery));
    assert_eq!(EventName::Tamper.message_type(), None);
    assert_eq!(EventName::LowBattery.message_type(), None);
}

#[test]
fn every_form_builds_its_node() {
    use Expression as E;
    let cases: Vec<(&str, Expression)> = vec![
        (
            "GeofenceEnter(\"Depot\")",
            E::Geofence {
                event: GeofenceEvent::Enter,
                target: Some("Depot".into()),
            },
        ),
        (
            "geofenceexit ( \"12\" )",
            E::Geofence {
                event: GeofenceEvent::Exit,
                target: Some("12".into()),
            },
        ),
        (
            "InGeofence",
            E::Geofence {
                event: GeofenceEvent::Inside,
                target: None,
            },
        ),
        (
            "INGEOFENCE()",
            E::Geofence {
                event: GeofenceEvent::Inside,
                target: None,
            },
        ),
        (
            r#"InGeofence("Site \"A\" \\ B")"#,
            E::Geofence {
                event: GeofenceEvent::Inside,
                target: Some(r#"Site "A" \ B"#.into()),
            },
        ),
        (
            "Speed > 100",
            E::Compare {
                metric: Metric::Speed,
                op: Comparison::Gt,
                value: 100.0,
            },
        ),
        (
            "speed>=80.5",
            E::Compare {
                metric: Metric::Speed,
                op: Comparison::Ge,
                value: 80.5,
            },
        ),
        (
            "Battery < 20",
            E::Compare {
                metric: Metric::Battery,
                op: Comparison::Lt,
                value: 20.0,
            },
        ),
        (
            "BATTERY <= 5",
            E::Compare {
                metric: Metric::Battery,
                op: Comparison::Le,
                value: 5.0,
            },
        ),
        (
            "Speed = 0",
            E::Compare {
                metric: Metric::Speed,
                op: Comparison::Eq,
                value: 0.0,
            },
        ),
        (
            "Battery != -1",
            E::Compare {
                metric: Metric::Battery,
                op: Comparison::Ne,
                value: -1.0,
            },
        ),
        (
            "Property(\"shift\") = \"night\"",
            E::Property {
                key: "shift".into(),
                equal: true,
                value: "night".into(),
            },
        ),
        (
            "property(\"k\") != \"\"",
            E::Property {
                key: "k".into(),
                equal: false,
                value: String::new(),
            },
        ),
        (
            "Time BETWEEN \"18:00\" AND \"06:00\"",
            E::TimeBetween {
                from: 18 * 60,
                to: 6 * 60,
            },
        ),
        (
            "time between \"00:00\" and \"23:59\"",
            E::TimeBetween {
                from: 0,
                to: 23 * 60 + 59,
            },
        ),
        (
            "Day IN (Sat, Sun)",
            E::DayIn(vec![Weekday::Sat, Weekday::Sun]),
        ),
        (
            "day in (monday,TUESDAY, wed,Thursday ,fri, saturday, SUNDAY)",
            E::DayIn(vec![
                Weekday::Mon,
                Weekday::Tue,
                Weekday::Wed,
                Weekday::Thu,
                Weekday::Fri,
                Weekday::Sat,
                Weekday::Sun,
            ]),
        ),
    ];
    for (input, expected) in cases {
        assert_eq!(parse(input), expected, "{input}");
    }
}

#[test]
fn operators_have_word_and_symbol_spellings() {
    use Expression as E;
    let and = E::And(vec![event(EventName::CheckIn), event(EventName::FreeText)]);
    assert_eq!(parse("CheckIn AND FreeText"), and);
    assert_eq!(parse("CheckIn and FreeText"), and);
    assert_eq!(parse("CheckIn&&FreeText"), and);
    let or = E::Or(vec![event(EventName::CheckIn), event(EventName::FreeText)]);
    assert_eq!(parse("CheckIn OR FreeText"), or);
    assert_eq!(parse("checkin Or freetext"), or);
    assert_eq!(parse("CheckIn||FreeText"), or);
    let not = E::Not(Box::new(event(EventName::PowerDown)));
    assert_eq!(parse("NOT PowerDown"), not);
    assert_eq!(parse("not PowerDown"), not);
    assert_eq!(parse("!PowerDown"), not);
    assert_eq!(parse("((PowerDown))"), event(EventName::PowerDown));
}

#[test]
fn not_binds_tighter_than_and_tighter_than_or() {
    use EventName::*;
    use Expression as E;
    let not = |e: Expression| E::Not(Box::new(e));
    assert_eq!(
        parse("NOT CheckIn AND FreeText OR Emergency"),
        E::Or(vec![
            E::And(vec![not(event(CheckIn)), event(FreeText)]),
            event(Emergency)
        ])
    );
    assert_eq!(
        parse("CheckIn OR FreeText AND Emergency"),
        E::Or(vec![
            event(CheckIn),
            E::And(vec![event(FreeText), event(Emergency)])
        ])
    );
    assert_eq!(
        parse("CheckIn || FreeText && !Emergency || Waypoint"),
        E::Or(vec![
            event(CheckIn),
            E::And(vec![event(FreeText), not(event(Emergency))]),
            event(Waypoint)
        ])
    );
    assert_eq!(
        parse("NOT (CheckIn OR FreeText) AND Emergency"),
        E::And(vec![
            not(E::Or(vec![event(CheckIn), event(FreeText)])),
            event(Emergency)
        ])
    );
    assert_eq!(parse("NOT NOT CheckIn"), not(not(event(CheckIn))));
    // Chains are flat; written parentheses are kept as structure.
    assert_eq!(
        parse("CheckIn OR FreeText OR Waypoint"),
        E::Or(vec![event(CheckIn), event(FreeText), event(Waypoint)])
    );
    assert_eq!(
        parse("(CheckIn OR FreeText) OR Waypoint"),
        E::Or(vec![
            E::Or(vec![event(CheckIn), event(FreeText)]),
            event(Waypoint)
        ])
    );
}

#[test]
fn and_inside_time_between_belongs_to_the_time() {
    assert_eq!(
        canonical("Time BETWEEN \"22:00\" AND \"05:00\" AND Day IN (Fri) OR CheckIn"),
        "Time BETWEEN \"22:00\" AND \"05:00\" AND Day IN (Fri) OR CheckIn"
    );
    assert_eq!(
        parse("Time BETWEEN \"22:00\" AND \"05:00\" AND CheckIn"),
        Expression::And(vec![
            Expression::TimeBetween {
                from: 22 * 60,
                to: 5 * 60
            },
            event(EventName::CheckIn)
        ])
    );
}

#[test]
fn display_is_canonical_and_round_trips() {
    for input in [
        "CheckIn",
        "emergency",
        "!FreeText",
        "CheckIn AND Emergency OR MissedCheckIn",
        "CheckIn && (Emergency || MissedCheckIn)",
        "(CheckIn && Emergency) && (FreeText || Waypoint || (PowerDown OR SwitchOn))",
        "NOT (CheckIn AND FreeText) AND NOT NOT (Waypoint OR SwitchOn)",
        "InGeofence()",
        r#"InGeofence("Site \"A\"") OR GeofenceExit("a\\b")"#,
        "Speed>=80.5 AND Battery != -0.25",
        "Speed > 0.1 AND Speed < 1000000000000 AND Speed > 0.000001",
        "Property(\"k\") != \"v\"",
        "day in (monday, FRI)",
        "(AutomaticPositionReport AND Speed > 120) AND NOT Day IN (Sat) AND Time between \"22:00\" and \"05:30\"",
    ] {
        let ast = parse(input);
        let printed = ast.to_string();
        assert_eq!(parse(&printed), ast, "{input} -> {printed}");
        assert_eq!(parse(&printed).to_string(), printed, "printing is stable");
    }
    for (input, printed) in [
        (
            "speed>=80.5 && ingeofence(\"x\")",
            "Speed >= 80.5 AND InGeofence(\"x\")",
        ),
        (
            "checkin || !(freetext && waypoint)",
            "CheckIn OR NOT (FreeText AND Waypoint)",
        ),
        ("((CheckIn)) AND (FreeText)", "CheckIn AND FreeText"),
        (
            "(CheckIn AND FreeText) OR Waypoint",
            "CheckIn AND FreeText OR Waypoint",
        ),
        (
            "CheckIn AND (FreeText OR Waypoint)",
            "CheckIn AND (FreeText OR Waypoint)",
        ),
        ("InGeofence()", "InGeofence"),
        (
            "time between \"06:00\" and \"07:00\"",
            "Time BETWEEN \"06:00\" AND \"07:00\"",
        ),
        ("Day IN (saturday, sun)", "Day IN (Sat, Sun)"),
        ("Speed == 5", "Speed = 5"),
        ("Speed <> 5.50", "Speed != 5.5"),
        ("Battery<-0", "Battery < -0"),
    ] {
        assert_eq!(canonical(input), printed, "{input}");
    }
}

/// A small deterministic generator (no extra crates): random trees print and parse back
/// to themselves.
#[test]
fn random_expressions_round_trip() {
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
        fn text(&mut self, non_empty: bool) -> String {
            const PIECES: [&str; 8] = ["a", "Depot", " ", "\"", "\\", "é", "AND", "42"];
            let len = self.next(4) + u64::from(non_empty);
            (0..len).map(|_| PIECES[self.next(8) as usize]).collect()
        }
        fn expression(&mut self, depth: u32) -> Expression {
            use Expression as E;
            let pick = if depth == 0 {
                3 + self.next(7)
            } else {
                self.next(10)
            };
            match pick {
                0 => E::And(
                    (0..2 + self.next(3))
                        .map(|_| self.expression(depth - 1))
                        .collect(),
                ),
                1 => E::Or(
                    (0..2 + self.next(3))
                        .map(|_| self.expression(depth - 1))
                        .collect(),
                ),
                2 => E::Not(Box::new(self.expression(depth - 1))),
                3 => E::Event(EventName::ALL[self.next(20) as usize]),
                4 => E::Geofence {
                    event: [GeofenceEvent::Enter, GeofenceEvent::Exit][self.next(2) as usize],
                    target: Some(self.text(true)),
                },
                5 => E::Geofence {
                    event: GeofenceEvent::Inside,
                    target: (self.next(2) == 0).then(|| self.text(true)),
                },
                6 => E::Compare {
                    metric: [Metric::Speed, Metric::Battery][self.next(2) as usize],
                    op: [
                        Comparison::Lt,
                        Comparison::Le,
                        Comparison::Gt,
                        Comparison::Ge,
                        Comparison::Eq,
                        Comparison::Ne,
                    ][self.next(6) as usize],
                    value: (self.next(2_000_001) as f64 - 1_000_000.0) / 1000.0,
                },
                7 => E::Property {
                    key: self.text(true),
                    equal: self.next(2) == 0,
                    value: self.text(false),
                },
                8 => E::TimeBetween {
                    from: self.next(1440) as u16,
                    to: self.next(1440) as u16,
                },
                _ => E::DayIn(
                    (0..=self.next(7))
                        .map(|i| [Weekday::Mon, Weekday::Sat, Weekday::Sun][(i % 3) as usize])
                        .collect(),
                ),
            }
        }
    }
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    for _ in 0..2000 {
        let ast = rng.expression(5);
        let printed = ast.to_string();
        assert_eq!(parse_expression(&printed), Ok(ast), "{printed}");
    }
}

#[test]
fn errors_name_position_expectation_and_what_was_found() {
    for (input, position, expected, found) in [
        // The brief's example shape: a stray word after a complete expression.
        (
            "Speed > 100 Sped",
            13,
            "AND, OR or end of expression",
            "\"Sped\"",
        ),
        ("Sped > 100", 1, EXPECTED_ATOM, "\"Sped\""),
        ("Speed > 100 AND Sped > 3", 17, EXPECTED_ATOM, "\"Sped\""),
        ("", 1, EXPECTED_ATOM, "end of expression"),
        ("   ", 4, EXPECTED_ATOM, "end of expression"),
        ("Emergency AND", 14, EXPECTED_ATOM, "end of expression"),
        ("Emergency OR OR", 14, EXPECTED_ATOM, "\"OR\""),
        ("NOT", 4, EXPECTED_ATOM, "end of expression"),
        ("AND CheckIn", 1, EXPECTED_ATOM, "\"AND\""),
        ("CheckIn Emergency", 9, EXPECTED_END, "\"Emergency\""),
        ("(CheckIn", 9, "\")\", AND or OR", "end of expression"),
        ("CheckIn)", 8, EXPECTED_END, "\")\""),
        ("()", 2, EXPECTED_ATOM, "\")\""),
        (
            "Speed fast",
            7,
            "a comparison (<, <=, >, >=, =, !=)",
            "\"fast\"",
        ),
        ("Speed >", 8, "a number", "end of expression"),
        ("Battery < \"20\"", 11, "a number", "string \"20\""),
        ("Speed > 100km", 12, EXPECTED_END, "\"km\""),
        ("GeofenceEnter", 14, "\"(\"", "end of expression"),
        (
            "GeofenceEnter(Depot)",
            15,
            "a geofence id or name in quotes",
            "\"Depot\"",
        ),
        (
            "GeofenceExit(\"\")",
            14,
            "a geofence id or name in quotes, not empty",
            "string \"\"",
        ),
        ("GeofenceEnter(\"a\"", 18, "\")\"", "end of expression"),
        (
            "GeofenceEnter()",
            15,
            "a geofence id or name in quotes",
            "\")\"",
        ),
        (
            "InGeofence(3)",
            12,
            "a geofence id or name in quotes, or \")\"",
            "number 3",
        ),
        ("Property(\"a\") > \"b\"", 15, "\"=\" or \"!=\"", "\">\""),
        ("Property(\"a\") = b", 17, "a value in quotes", "\"b\""),
        (
            "Property(a) = \"b\"",
            10,
            "a property name in quotes",
            "\"a\"",
        ),
        ("Time \"18:00\"", 6, "BETWEEN", "string \"18:00\""),
        (
            "Time BETWEEN \"18:00\" \"06:00\"",
            22,
            "AND",
            "string \"06:00\"",
        ),
        (
            "Time BETWEEN \"25:00\" AND \"06:00\"",
            14,
            "a time \"HH:mm\" between \"00:00\" and \"23:59\"",
            "string \"25:00\"",
        ),
        (
            "Time BETWEEN \"18:00\" AND \"6:00\"",
            26,
            "a time \"HH:mm\" between \"00:00\" and \"23:59\"",
            "string \"6:00\"",
        ),
        (
            "Time BETWEEN \"+1:30\" AND \"06:00\"",
            14,
            "a time \"HH:mm\" between \"00:00\" and \"23:59\"",
            "string \"+1:30\"",
        ),
        (
            "Time BETWEEN \"12:60\" AND \"06:00\"",
            14,
            "a time \"HH:mm\" between \"00:00\" and \"23:59\"",
            "string \"12:60\"",
        ),
        (
            "Time BETWEEN 18 AND \"06:00\"",
            14,
            "a time \"HH:mm\" between \"00:00\" and \"23:59\"",
            "number 18",
        ),
        ("Day (Sat)", 5, "IN", "\"(\""),
        ("Day IN Sat", 8, "\"(\"", "\"Sat\""),
        (
            "Day IN ()",
            9,
            "a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)",
            "\")\"",
        ),
        (
            "Day IN (Sat, Funday)",
            14,
            "a day (Mon, Tue, Wed, Thu, Fri, Sat, Sun)",
            "\"Funday\"",
        ),
        ("Day IN (Sat Sun)", 13, "\",\" or \")\"", "\"Sun\""),
        // Characters the lexer cannot read are reported with the parser's expectation.
        ("CheckIn # x", 9, EXPECTED_END, "\"#\""),
        ("CheckIn & FreeText", 9, EXPECTED_END, "\"&\""),
        ("# CheckIn", 1, EXPECTED_ATOM, "\"#\""),
        ("Speed > .5", 9, "a number", "\".\""),
        (
            "InGeofence(\"open",
            12,
            "a closing '\"' for this string",
            "end of expression",
        ),
    ] {
        let e = err(input);
        assert_eq!(
            (e.position, e.expected.as_str(), e.found.as_str()),
            (position, expected, found),
            "{input}"
        );
    }
}

#[test]
fn the_first_error_in_reading_order_wins() {
    // A grammar error before an unterminated string is reported, not the string.
    let e = err("Sped > \"abc");
    assert_eq!((e.position, e.found.as_str()), (1, "\"Sped\""));
    // And a lexer error is only reported once the parser reaches it.
    let e = err("CheckIn OR \"abc");
    assert_eq!(e.position, 12);
}

#[test]
fn messages_read_well() {
    assert_eq!(
        err("Speed > 100 Sped").to_string(),
        "position 13: expected AND, OR or end of expression, found \"Sped\""
    );
    let long = format!("CheckIn {}", "x".repeat(200));
    let message = err(&long).to_string();
    assert!(message.len() < 120, "{message}");
    assert!(message.ends_with("…\""), "{message}");
}

#[test]
fn length_and_depth_limits() {
    let at_limit = format!("{}CheckIn{}", "(".repeat(63), ")".repeat(63));
    assert!(parse_expression(&at_limit).is_ok());
    let deep = format!("{}CheckIn{}", "(".repeat(64), ")".repeat(64));
    let e = err(&deep);
    assert_eq!(e.position, 65);
    assert!(e.expected.contains("at most 64 levels"), "{e}");
    let nots = format!("{}CheckIn", "!".repeat(3000));
    assert!(err(&nots).expected.contains("levels"));
    // Deep brackets far past the limit fail quickly rather than overflowing the stack.
    let huge = "(".repeat(MAX_EXPRESSION_CHARS);
    assert!(err(&huge).expected.contains("levels"));

    // The longest flat chain is one node, however long.
    let longest = "CheckIn||".repeat(443) + "CheckIn";
    assert!(longest.len() <= MAX_EXPRESSION_CHARS);
    let Expression::Or(items) = parse(&longest) else {
        panic!("not an OR chain")
    };
    assert_eq!(items.len(), 444);
    let too_long = format!("{}{}", " ".repeat(MAX_EXPRESSION_CHARS), "x");
    let e = err(&too_long);
    assert_eq!(e.position, MAX_EXPRESSION_CHARS + 1);
    assert_eq!(e.expected, "at most 4000 characters");
    assert_eq!(e.found, "4001 characters");
    // Characters, not bytes.
    let wide = format!("InGeofence(\"{}\")", "é".repeat(3900));
    assert!(parse_expression(&wide).is_ok());
}

#[test]
fn helpers_for_the_engine() {
    assert!(parse("CheckIn AND NOT Day IN (Sun)").uses_local_time());
    assert!(parse("Time BETWEEN \"01:00\" AND \"02:00\" OR CheckIn").uses_local_time());
    assert!(!parse("CheckIn OR Speed > 3").uses_local_time());
    let mut names = Vec::new();
    parse("GeofenceEnter(\"a\") OR (InGeofence(\"b\") AND InGeofence)").any(&mut |e| {
        if let Expression::Geofence {
            target: Some(t), ..
        } = e
        {
            names.push(t.clone());
        }
        false
    });
    assert_eq!(names, ["a", "b"]);
}
