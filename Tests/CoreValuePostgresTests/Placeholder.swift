import Testing

@Test func placeholderCoreValuePostgresTests() { #expect(Bool(true)) }
