import Testing

@Test func placeholderLibPQTests() { #expect(Bool(true)) }
