@_spi(StoreImplementation) import CoreValue

extension FetchStatements {
    /// The one statement of an aggregate: `SELECT <group columns>, <function> FROM <table> AS t [WHERE ...]
    /// [GROUP BY <group columns> ORDER BY <group columns>]`. Groups come in ascending order with nulls last
    /// (PostgreSQL's default, as `Aggregator` orders them), text in byte order (the columns are
    /// `COLLATE "C"`). Each result column is cast to the type its ``AttributeType`` decodes from.
    ///
    /// - Throws: As `rows(for:)`: the predicate's compilation errors, before any SQL exists.
    package func aggregate(_ request: AggregateRequest, entity: Entity, resultType: AttributeType) throws -> SQL {
        var groups: [SQL] = []
        var columns: [SQL] = []
        for name in request.groupBy {
            let type = entity.attribute(named: name)?.type ?? .string
            groups.append("t.\(SQLIdentifier(name))")
            columns.append("t.\(SQLIdentifier(name))::" + SQL(unsafeRaw: ColumnType.sqlName(of: type)))
        }
        columns.append(function(request, entity: entity, resultType: resultType))
        var sql: SQL =
            "SELECT \(SQL.joined(columns, separator: ", ")) FROM \(SQLIdentifier(entity.name, schema: schema)) AS t"
        if let predicate = request.predicate {
            let compiler = self.compiler(for: entity)
            sql.append(" WHERE \(try compiler.compile(predicate))")
        }
        if !groups.isEmpty {
            let grouped = SQL.joined(groups, separator: ", ")
            sql.append(" GROUP BY \(grouped) ORDER BY \(grouped)")
        }
        return sql
    }

    /// The function's expression. Integer sums go through `numeric` (exact, whatever the partial sums) and are
    /// cast to `bigint` at the end, which fails with 22003 rather than wrap; `real` values are summed and
    /// averaged as `double precision`, as `Aggregator` does; an integer mean is `numeric`'s, rounded once.
    private func function(_ request: AggregateRequest, entity: Entity, resultType: AttributeType) -> SQL {
        guard let key = request.key else { return "count(*)" }
        let column: SQL = "t.\(SQLIdentifier(key))"
        let input = entity.attribute(named: key)?.type ?? resultType
        let asResult = SQL(unsafeRaw: ColumnType.sqlName(of: resultType))
        switch request.function {
        case .countRows: return "count(*)"
        case .count: return "count(\(column))"
        case .minimum: return "min(\(column))::" + asResult
        case .maximum: return "max(\(column))::" + asResult
        case .sum:
            switch input {
            case .int16, .int32, .int64: return "sum(\(column)::numeric)::bigint"
            case .float: return "sum(\(column)::double precision)"
            default: return "sum(\(column))::" + asResult
            }
        case .average:
            switch input {
            case .float: return "avg(\(column)::double precision)"
            default: return "avg(\(column))::" + asResult
            }
        }
    }
}
