import Foundation

/// Writes `value` to standard output as the JSON every `--json` of vtrecord prints: indented,
/// keys sorted, slashes as they are (device paths stay readable), one newline at the end.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    var data = try encoder.encode(value)
    data.append(0x0A)
    FileHandle.standardOutput.write(data)
}
