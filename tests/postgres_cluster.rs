//! The PostgreSQL test helper itself (bg_tests::postgres): a private
//! cluster starts, answers psql, and keeps committed data across an
//! immediate stop (a crash) and a restart on the same port.

use std::net::TcpStream;

use bg_tests::postgres::PgCluster;

#[test]
fn committed_data_survives_an_immediate_stop_and_restart() {
    let Some(mut pg) = PgCluster::start() else {
        return;
    };
    let port = pg.port();
    assert_eq!(
        pg.url(),
        format!("postgres://postgres@127.0.0.1:{port}/postgres")
    );
    assert_eq!(pg.psql("postgres", "SELECT 1"), "1\n");

    let url = pg.create_database("survival");
    assert_eq!(
        url,
        format!("postgres://postgres@127.0.0.1:{port}/survival")
    );
    pg.psql(
        "survival",
        "CREATE TABLE t (id int PRIMARY KEY, v text NOT NULL);\n\
         INSERT INTO t VALUES (1, 'one'), (2, 'two');",
    );

    pg.stop_immediate();
    assert!(
        TcpStream::connect(("127.0.0.1", port)).is_err(),
        "nothing listens on {port} once stopped"
    );

    pg.start_again();
    assert_eq!(pg.port(), port);
    assert_eq!(
        pg.psql("survival", "SELECT id, v FROM t ORDER BY id"),
        "1|one\n2|two\n"
    );
}
