import CTurboJPEG
import CV4L2
import CYUV
import Glibc
import Testing

/// The C shims for capture import, link and call into the real libraries.
@Suite struct CLibraryShimTests {
    @Test func v4l2RequestCodesAndFourCCsMatchTheKernelHeaders() {
        // _IOWR('V', 17, struct v4l2_buffer): direction 3, size 88 on 64-bit, type 'V', nr 17.
        #expect(vt_VIDIOC_DQBUF & 0xFF == 17)
        #expect((vt_VIDIOC_DQBUF >> 8) & 0xFF == UInt(UInt8(ascii: "V")))
        #expect((vt_VIDIOC_DQBUF >> 16) & 0x3FFF == UInt(MemoryLayout<v4l2_buffer>.size))
        #expect(vt_VIDIOC_QUERYCAP & 0xFF == 0)
        #expect(vt_V4L2_PIX_FMT_YUYV == fourCC("YUYV"))
        #expect(vt_V4L2_PIX_FMT_NV12 == fourCC("NV12"))
        #expect(vt_V4L2_PIX_FMT_YUV420 == fourCC("YU12"))
        #expect(vt_V4L2_PIX_FMT_MJPEG == fourCC("MJPG"))
    }

    @Test func libv4l2OpenReportsAMissingNode() {
        let fd = vt_v4l2_open("/nonexistent/video99", O_RDWR)
        #expect(fd == -1)
    }

    @Test func libyuvConvertsYUYVToI420() {
        // Two YUYV pixels per 4 bytes: Y0 U Y1 V.
        let width = 4, height = 2
        let yuyv: [UInt8] = [10, 100, 20, 200, 30, 110, 40, 210,
                             50, 120, 60, 220, 70, 130, 80, 230]
        var y = [UInt8](repeating: 0, count: width * height)
        var u = [UInt8](repeating: 0, count: 2)
        var v = [UInt8](repeating: 0, count: 2)
        let result = YUY2ToI420(yuyv, Int32(width * 2), &y, Int32(width), &u, 2, &v, 2, Int32(width), Int32(height))
        #expect(result == 0)
        #expect(y == [10, 20, 30, 40, 50, 60, 70, 80])
        // Chroma of the two rows is averaged (rounding up).
        #expect(u == [110, 120])
        #expect(v == [210, 220])
    }

    @Test func turboJPEGDecompressorOpensAndRefusesGarbage() throws {
        let handle = try #require(tjInitDecompress())
        defer { tjDestroy(handle) }
        var garbage: [UInt8] = [0x00, 0x01, 0x02, 0x03]
        var width: Int32 = 0, height: Int32 = 0, subsampling: Int32 = 0, colourspace: Int32 = 0
        let result = tjDecompressHeader3(handle, &garbage, UInt(garbage.count), &width, &height, &subsampling, &colourspace)
        #expect(result == -1)
    }

    private func fourCC(_ s: String) -> UInt32 {
        let b = Array(s.utf8)
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }
}
