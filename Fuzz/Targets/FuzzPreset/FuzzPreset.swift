import VTCore
@testable import vtrecord

/// libFuzzer target: a preset file as `vtrecord presets show FILE` reads it — TOML, keys,
/// value types, each value as the command line parses it — then the settings it adds up to
/// through the recording command's own parser. Bad input must be a `PresetError` or a
/// command-line refusal, never a crash.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    do throws(PresetError) {
        let preset = try Preset(name: "fuzz", origin: .file("fuzz.toml"), text: text)
        let arguments = PresetResolution.fitted(preset.entries, typed: []).flatMap { $0.arguments() }
        _ = try? VTRecord.parseAsRoot(arguments)
    } catch {
        precondition(error.exitStatus == .usage, "\(error) exits \(error.exitStatus), not 2")
    }
    return 0
}
