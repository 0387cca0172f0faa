import H264FuzzProperties

/// libFuzzer target: Annex B splitting, the conversion to AVCC and back, and emulation prevention.
/// A broken property stops the run as a crash, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let problem = H264FuzzProperties.annexB(input) ?? H264FuzzProperties.emulationPrevention(input) {
        fatalError(problem)
    }
    return 0
}
