// The driver's types that appear in this module's API, for users who `import CoreValuePostgres`: the
// connection settings a store is opened with, and the errors a call can throw. The rest of the driver is
// `package`: an implementation detail, free to change between releases.
@_exported import struct LibPQ.ConnectionConfiguration
@_exported import struct LibPQ.DatabaseError
@_exported import struct LibPQ.LibPQError
@_exported import struct LibPQ.SQLState
