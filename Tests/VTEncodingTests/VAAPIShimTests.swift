import CVAAPI
import Glibc
import Testing

/// The libva shim imports and links; libva's calls and constants come through directly.
@Suite struct VAAPIShimTests {
    @Test func libvaNamesItsStatusCodes() {
        let text = String(cString: vaErrorStr(VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT))
        #expect(text.lowercased().contains("entrypoint"))
    }

    @Test func drmDisplayRefusesANonDRMDescriptor() {
        // libva-drm checks the fd is a DRM node before giving a display.
        let fd = open("/dev/null", O_RDWR)
        defer { close(fd) }
        #expect(vaGetDisplayDRM(fd) == nil)
    }
}
