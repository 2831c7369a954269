//! The SQL of a list of matches, for both stores: the same clauses, with
//! `?` (SQLite) or `$n` (PostgreSQL) for each value, and the values in
//! their order. Keyset pages: the order's time column and the game id
//! after it, so a page starts right after the last match of the one
//! before, however many matches were created or removed since.

use crate::{MatchOrder, MatchQuery, MatchState};

/// The columns of a listed match (see `rows::match_row`).
pub(crate) const MATCH_COLUMNS: &str = "game_id, variant, variant_version, options, version, \
     labels, white_player, black_player, owner, CAST(to_act AS BIGINT) AS to_act, \
     CAST(CASE WHEN abandoned THEN 1 ELSE 0 END AS BIGINT) AS abandoned, created_us, updated_us, \
     CAST(CASE WHEN finished_at IS NULL THEN 0 ELSE 1 END AS BIGINT) AS finished";

/// A value a list's statement binds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Value {
    Int(i64),
    Text(String),
}

/// A list's statement and its values.
pub(crate) struct Statement {
    pub sql: String,
    pub values: Vec<Value>,
}

/// How a store writes a value's place in a statement.
#[derive(Clone, Copy)]
pub(crate) enum Dialect {
    Sqlite,
    Postgres,
}

struct Builder {
    dialect: Dialect,
    clauses: Vec<String>,
    values: Vec<Value>,
}

impl Builder {
    /// The place of a new value.
    fn bind(&mut self, value: Value) -> String {
        self.values.push(value);
        match self.dialect {
            Dialect::Sqlite => "?".to_string(),
            Dialect::Postgres => format!("${}", self.values.len()),
        }
    }
}

/// The statement of `query`.
pub(crate) fn statement(query: &MatchQuery, dialect: Dialect) -> Statement {
    let mut b = Builder {
        dialect,
        clauses: Vec::new(),
        values: Vec::new(),
    };
    let time = match query.order {
        MatchOrder::Created => "created_us",
        MatchOrder::Updated => "updated_us",
    };
    if let Some((at, game_id)) = &query.after {
        let (at, id) = (
            b.bind(Value::Int(*at)),
            b.bind(Value::Text(game_id.clone())),
        );
        let after = if query.descending { "<" } else { ">" };
        b.clauses
            .push(format!("({time}, game_id) {after} ({at}, {id})"));
    }
    if !query.variants.is_empty() {
        let places: Vec<String> = query
            .variants
            .iter()
            .map(|v| b.bind(Value::Text(v.clone())))
            .collect();
        b.clauses
            .push(format!("variant IN ({})", places.join(", ")));
    }
    if !query.states.is_empty() {
        let states: Vec<&str> = query
            .states
            .iter()
            .map(|s| match s {
                MatchState::InProgress => "finished_at IS NULL",
                MatchState::Finished => "(finished_at IS NOT NULL AND NOT abandoned)",
                MatchState::Abandoned => "(finished_at IS NOT NULL AND abandoned)",
            })
            .collect();
        b.clauses.push(format!("({})", states.join(" OR ")));
    }
    if let Some(player) = &query.player {
        let (w, k) = (
            b.bind(Value::Text(player.clone())),
            b.bind(Value::Text(player.clone())),
        );
        b.clauses
            .push(format!("(white_player = {w} OR black_player = {k})"));
    }
    if let Some(player) = &query.to_act_player {
        let (w, k) = (
            b.bind(Value::Text(player.clone())),
            b.bind(Value::Text(player.clone())),
        );
        b.clauses.push(format!(
            "((white_player = {w} AND to_act = 1) OR (black_player = {k} AND to_act = 2))"
        ));
    }
    for (column, (from, to)) in [("created_us", query.created), ("updated_us", query.updated)] {
        if let Some(from) = from {
            let at = b.bind(Value::Int(from));
            b.clauses.push(format!("{column} >= {at}"));
        }
        if let Some(to) = to {
            let at = b.bind(Value::Int(to));
            b.clauses.push(format!("{column} < {at}"));
        }
    }
    if let Some(owner) = &query.owner {
        let at = b.bind(Value::Text(owner.clone()));
        b.clauses.push(format!("owner = {at}"));
    }
    let direction = if query.descending { "DESC" } else { "ASC" };
    let limit = b.bind(Value::Int(i64::from(query.limit)));
    let filter = if b.clauses.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", b.clauses.join(" AND "))
    };
    Statement {
        sql: format!(
            "SELECT {MATCH_COLUMNS} FROM games{filter} \
             ORDER BY {time} {direction}, game_id {direction} LIMIT {limit}"
        ),
        values: b.values,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_after_a_key_filters_by_every_field_given() {
        let query = MatchQuery {
            order: MatchOrder::Updated,
            descending: true,
            after: Some((5, "g".into())),
            limit: 10,
            variants: vec!["standard".into(), "plakoto".into()],
            states: vec![MatchState::InProgress],
            player: Some("p".into()),
            ..Default::default()
        };
        let s = statement(&query, Dialect::Postgres);
        assert!(
            s.sql.contains("(updated_us, game_id) < ($1, $2)"),
            "{}",
            s.sql
        );
        assert!(s.sql.contains("variant IN ($3, $4)"), "{}", s.sql);
        assert!(
            s.sql
                .ends_with("ORDER BY updated_us DESC, game_id DESC LIMIT $7"),
            "{}",
            s.sql
        );
        assert_eq!(s.values.len(), 7);
        let s = statement(&MatchQuery::default(), Dialect::Sqlite);
        assert!(!s.sql.contains("WHERE"), "{}", s.sql);
        assert!(
            s.sql
                .ends_with("ORDER BY created_us ASC, game_id ASC LIMIT ?")
        );
    }
}
