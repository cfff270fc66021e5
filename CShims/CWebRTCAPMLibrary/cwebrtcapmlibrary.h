// CWebRTCAPMLibrary: WebRTC's audio processing module (webrtc-audio-processing 0.3; 1.x is in
// CShims/CWebRTCAPMLibrary1, which Package.swift takes instead where pkg-config finds it), found
// through pkg-config, for the CWebRTCAPM shim to compile against and link. Its headers are
// C++: Swift never imports them (it calls CWebRTCAPM), so this header includes none of them.
#ifndef CWEBRTCAPMLIBRARY_H
#define CWEBRTCAPMLIBRARY_H
#endif
