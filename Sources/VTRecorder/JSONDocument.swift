import Foundation

/// The JSON every document of vtrecord is written as (`--json-summary`, every `--json`):
/// indented, keys sorted, slashes as they are (device paths stay readable), one newline at
/// the end.
public func jsonDocument<T: Encodable>(_ value: T) throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data = try encoder.encode(value)
    data.append(0x0A)
    return data
}

/// Writes `value` to standard output as a JSON document.
public func printJSON<T: Encodable>(_ value: T) throws {
    FileHandle.standardOutput.write(try jsonDocument(value))
}
