import Testing

@Test func placeholderCoreValueTests() { #expect(Bool(true)) }
