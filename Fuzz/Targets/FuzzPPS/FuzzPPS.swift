import H264FuzzProperties

/// libFuzzer target: PPS NAL units for 4:2:0 and 4:4:4: parsed, summarised, written back and read again.
/// A broken property stops the run as a crash, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let problem = H264FuzzProperties.pictureParameterSet(input) {
        fatalError(problem)
    }
    return 0
}
