import H264FuzzProperties

/// libFuzzer target: raw streams through `vtrecord remux`'s access unit reader (picture order
/// counts, display positions). A broken property stops the run as a crash, so libFuzzer keeps
/// the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let problem = H264FuzzProperties.accessUnits(input) {
        fatalError(problem)
    }
    return 0
}
