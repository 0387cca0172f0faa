import H264FuzzProperties

/// libFuzzer target: Whole Annex B streams through `vtrecord inspect`'s reader, report printed and encoded.
/// A broken property stops the run as a crash, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let problem = H264FuzzProperties.inspect(input) {
        fatalError(problem)
    }
    return 0
}
