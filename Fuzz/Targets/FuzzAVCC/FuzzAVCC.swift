import H264FuzzProperties

/// libFuzzer target: AVCC access units with 1-, 2- and 4-byte lengths, read and written as Annex B.
/// A broken property stops the run as a crash, so libFuzzer keeps the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let problem = H264FuzzProperties.avcc(input) {
        fatalError(problem)
    }
    return 0
}
