	.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	fp8_tail_gemm_0
	.p2align	8
	.type	fp8_tail_gemm_0,@function
fp8_tail_gemm_0:
	s_load_dwordx2 s[16:17], s[0:1], 0x0
	s_load_dwordx2 s[20:21], s[0:1], 0x10
	s_load_dwordx2 s[4:5], s[0:1], 0x20
	s_load_dwordx2 s[8:9], s[0:1], 0x30
	s_load_dwordx2 s[12:13], s[0:1], 0x40
	s_load_dword s3, s[0:1], 0x50
	v_lshrrev_b32_e32 v1, 6, v0
	s_mov_b32 s19, 0x27000
	s_mov_b32 s18, -1
	s_mov_b32 s22, s18
	s_waitcnt lgkmcnt(0)
	s_ashr_i32 s0, s3, 31
	s_lshr_b32 s0, s0, 25
	s_add_i32 s0, s3, s0
	s_ashr_i32 s10, s0, 7
	s_and_b32 s0, s0, 0xffffff80
	s_cmp_lg_u32 s3, s0
	s_cselect_b64 s[0:1], -1, 0
	s_cmp_lt_i32 s3, 0
	s_cselect_b64 s[6:7], -1, 0
	s_and_b64 s[0:1], s[6:7], s[0:1]
	s_subb_u32 s0, s10, 0
	s_abs_i32 s7, s0
	v_cvt_f32_u32_e32 v2, s7
	s_sub_i32 s11, 0, s7
	s_abs_i32 s1, s2
	s_xor_b32 s6, s0, s2
	v_rcp_f32_e32 v2, v2
	s_ashr_i32 s10, s6, 31
	s_mov_b32 s23, s19
	s_movk_i32 s34, 0x80
	v_mul_f32_e32 v2, 0x4f7ffffe, v2
	v_cvt_u32_f32_e32 v2, v2
	v_and_b32_e32 v58, 15, v0
	v_bfe_u32 v57, v0, 4, 2
	v_and_b32_e32 v4, 7, v0
	v_readfirstlane_b32 s14, v2
	s_mul_i32 s11, s11, s14
	s_mul_hi_u32 s11, s14, s11
	s_add_i32 s14, s14, s11
	s_mul_hi_u32 s11, s1, s14
	s_mul_i32 s14, s11, s7
	s_sub_i32 s1, s1, s14
	s_add_i32 s14, s11, 1
	s_sub_i32 s15, s1, s7
	s_cmp_ge_u32 s1, s7
	s_cselect_b32 s11, s14, s11
	s_cselect_b32 s1, s15, s1
	s_add_i32 s14, s11, 1
	s_cmp_ge_u32 s1, s7
	s_cselect_b32 s1, s14, s11
	s_xor_b32 s11, s1, s10
	s_sub_i32 s1, s11, s10
	s_mul_i32 s14, s1, s0
	s_cmp_lg_u32 s2, s14
	s_cselect_b64 s[0:1], -1, 0
	s_cmp_lt_i32 s6, 0
	s_cselect_b64 s[6:7], -1, 0
	s_and_b64 s[0:1], s[6:7], s[0:1]
	s_subb_u32 s0, s11, s10
	v_bfe_u32 v2, v0, 3, 3
	s_lshl_b32 s0, s0, 7
	v_lshl_or_b32 v3, v1, 3, v2
	v_bitop3_b32 v5, v2, v0, 7 bitop3:0x78
	v_or_b32_e32 v6, s0, v3
	v_lshlrev_b32_e32 v5, 4, v5
	v_lshl_or_b32 v68, v6, 9, v5
	v_or_b32_e32 v6, 4, v1
	v_lshl_or_b32 v7, v6, 3, v2
	v_or_b32_e32 v8, s0, v7
	s_sub_i32 s1, s2, s14
	v_lshl_or_b32 v69, v8, 9, v5
	v_or_b32_e32 v8, 8, v1
	v_lshl_or_b32 v9, v8, 3, v2
	s_lshl_b32 s1, s1, 7
	v_or_b32_e32 v10, s0, v9
	v_or_b32_e32 v3, s1, v3
	v_lshl_or_b32 v70, v10, 9, v5
	v_or_b32_e32 v10, 12, v1
	v_lshl_or_b32 v72, v3, 9, v5
	v_or_b32_e32 v3, s1, v7
	v_lshl_or_b32 v2, v10, 3, v2
	v_lshl_or_b32 v73, v3, 9, v5
	v_or_b32_e32 v3, s1, v9
	v_lshlrev_b32_e32 v1, 10, v1
	v_or_b32_e32 v11, s0, v2
	v_lshl_or_b32 v74, v3, 9, v5
	v_or_b32_e32 v2, s1, v2
	v_readfirstlane_b32 s25, v1
	v_or_b32_e32 v3, 0x1000, v1
	s_and_b32 s17, s17, 0xffff
	v_lshl_or_b32 v71, v11, 9, v5
	v_lshl_or_b32 v75, v2, 9, v5
	s_mov_b32 m0, s25
	v_readfirstlane_b32 s26, v3
	v_or_b32_e32 v5, 0x2000, v1
	buffer_load_dwordx4 v68, s[16:19], 0 offen lds
	v_lshlrev_b32_e32 v2, 10, v6
	s_mov_b32 m0, s26
	v_readfirstlane_b32 s27, v5
	v_or_b32_e32 v6, 0x3000, v1
	buffer_load_dwordx4 v69, s[16:19], 0 offen lds
	s_mov_b32 m0, s27
	v_readfirstlane_b32 s28, v6
	v_or_b32_e32 v6, 0x4000, v1
	v_lshlrev_b32_e32 v3, 10, v8
	buffer_load_dwordx4 v70, s[16:19], 0 offen lds
	s_mov_b32 m0, s28
	v_readfirstlane_b32 s29, v6
	v_or_b32_e32 v6, 0x4000, v2
	s_and_b32 s21, s21, 0xffff
	v_lshlrev_b32_e32 v5, 10, v10
	buffer_load_dwordx4 v71, s[16:19], 0 offen lds
	s_mov_b32 m0, s29
	v_readfirstlane_b32 s30, v6
	v_or_b32_e32 v6, 0x4000, v3
	buffer_load_dwordx4 v72, s[20:23], 0 offen lds
	s_mov_b32 m0, s30
	v_readfirstlane_b32 s31, v6
	v_or_b32_e32 v6, 0x4000, v5
	buffer_load_dwordx4 v73, s[20:23], 0 offen lds
	s_mov_b32 m0, s31
	v_readfirstlane_b32 s33, v6
	v_or_b32_e32 v6, 0x8000, v1
	v_or_b32_e32 v1, 0xc000, v1
	buffer_load_dwordx4 v74, s[20:23], 0 offen lds
	s_mov_b32 m0, s33
	v_readfirstlane_b32 s2, v6
	v_or_b32_e32 v6, 0x8000, v2
	v_readfirstlane_b32 s11, v1
	v_or_b32_e32 v1, 0xc000, v2
	buffer_load_dwordx4 v75, s[20:23], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s6, v6
	v_or_b32_e32 v6, 0x8000, v3
	v_readfirstlane_b32 s14, v1
	v_or_b32_e32 v1, 0xc000, v3
	buffer_load_dwordx4 v68, s[16:19], s34 offen lds
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s7, v6
	v_or_b32_e32 v6, 0x8000, v5
	v_readfirstlane_b32 s15, v1
	v_or_b32_e32 v1, 0xc000, v5
	buffer_load_dwordx4 v69, s[16:19], s34 offen lds
	s_mov_b32 m0, s7
	v_readfirstlane_b32 s10, v6
	v_readfirstlane_b32 s24, v1
	v_lshrrev_b32_e32 v1, 1, v0
	buffer_load_dwordx4 v70, s[16:19], s34 offen lds
	s_mov_b32 m0, s10
	v_and_b32_e32 v56, 64, v1
	buffer_load_dwordx4 v71, s[16:19], s34 offen lds
	s_mov_b32 m0, s11
	v_or_b32_e32 v1, v56, v58
	v_lshlrev_b32_e32 v2, 1, v57
	buffer_load_dwordx4 v72, s[20:23], s34 offen lds
	s_mov_b32 m0, s14
	v_lshlrev_b32_e32 v76, 7, v1
	v_bitop3_b32 v1, v2, v0, 7 bitop3:0x78
	buffer_load_dwordx4 v73, s[20:23], s34 offen lds
	s_mov_b32 m0, s15
	v_lshlrev_b32_e32 v77, 4, v1
	v_and_b32_e32 v59, 64, v0
	v_lshlrev_b32_e32 v0, 7, v0
	buffer_load_dwordx4 v74, s[20:23], s34 offen lds
	s_mov_b32 m0, s24
	v_or_b32_e32 v78, v76, v77
	v_bitop3_b32 v1, v2, v4, 1 bitop3:0x36
	v_and_b32_e32 v0, 0x2780, v0
	buffer_load_dwordx4 v75, s[20:23], s34 offen lds
	s_waitcnt vmcnt(8)
	s_barrier
	ds_read_b128 v[12:15], v78
	v_lshlrev_b32_e32 v79, 4, v1
	v_or_b32_e32 v0, 0x4000, v0
	v_or_b32_e32 v80, v79, v76
	v_or_b32_e32 v81, v77, v0
	v_or_b32_e32 v82, v79, v0
	s_movk_i32 s34, 0x100
	s_mov_b32 m0, s25
	ds_read_b128 v[16:19], v80
	ds_read_b128 v[28:31], v78 offset:2048
	ds_read_b128 v[32:35], v80 offset:2048
	ds_read_b128 v[44:47], v78 offset:4096
	ds_read_b128 v[48:51], v80 offset:4096
	ds_read_b128 v[84:87], v78 offset:6144
	ds_read_b128 v[88:91], v80 offset:6144
	ds_read_b128 v[60:63], v81
	ds_read_b128 v[64:67], v82
	ds_read_b128 v[92:95], v81 offset:2048
	ds_read_b128 v[96:99], v82 offset:2048
	ds_read_b128 v[102:105], v81 offset:4096
	ds_read_b128 v[106:109], v82 offset:4096
	ds_read_b128 v[110:113], v81 offset:6144
	ds_read_b128 v[114:117], v82 offset:6144
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v68, s[16:19], s34 offen lds
	s_mov_b32 m0, s26
	v_or_b32_e32 v76, 0x8000, v76
	buffer_load_dwordx4 v69, s[16:19], s34 offen lds
	s_mov_b32 m0, s27
	v_mov_b32_e32 v100, 0x7f7f7f7f
	buffer_load_dwordx4 v70, s[16:19], s34 offen lds
	s_mov_b32 m0, s28
	v_or_b32_e32 v77, v76, v77
	buffer_load_dwordx4 v71, s[16:19], s34 offen lds
	s_mov_b32 m0, s29
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[12:19], v[60:67], 0, v100, v100 op_sel_hi:[0,0,0]
	buffer_load_dwordx4 v72, s[20:23], s34 offen lds
	s_mov_b32 m0, s30
	v_or_b32_e32 v76, v79, v76
	buffer_load_dwordx4 v73, s[20:23], s34 offen lds
	s_mov_b32 m0, s31
	s_movk_i32 s25, 0x180
	buffer_load_dwordx4 v74, s[20:23], s34 offen lds
	s_mov_b32 m0, s33
	v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[12:19], v[92:99], 0, v100, v100 op_sel_hi:[0,0,0]
	buffer_load_dwordx4 v75, s[20:23], s34 offen lds
	s_waitcnt vmcnt(8)
	s_barrier
	s_mov_b32 m0, s2
	v_lshlrev_b32_e32 v57, 2, v57
	v_or3_b32 v58, s1, v59, v58
	v_or3_b32 v59, v57, v56, s0
	v_mfma_scale_f32_16x16x128_f8f6f4 v[8:11], v[12:19], v[102:109], 0, v100, v100 op_sel_hi:[0,0,0]
	s_and_b32 s9, s9, 0xffff
	s_and_b32 s13, s13, 0xffff
	s_and_b32 s5, s5, 0xffff
	v_mfma_scale_f32_16x16x128_f8f6f4 v[12:15], v[12:19], v[110:117], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[16:19], v[28:35], v[60:67], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[20:23], v[28:35], v[92:99], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[24:27], v[28:35], v[102:109], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[28:31], v[28:35], v[110:117], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[32:35], v[44:51], v[60:67], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[36:39], v[44:51], v[92:99], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[40:43], v[44:51], v[102:109], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[44:47], v[44:51], v[110:117], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[48:51], v[84:91], v[60:67], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[52:55], v[84:91], v[92:99], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[60:63], v[84:91], v[102:109], 0, v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[64:67], v[84:91], v[110:117], 0, v100, v100 op_sel_hi:[0,0,0]
	ds_read_b128 v[84:87], v77
	ds_read_b128 v[88:91], v76
	ds_read_b128 v[92:95], v77 offset:2048
	ds_read_b128 v[96:99], v76 offset:2048
	ds_read_b128 v[102:105], v77 offset:4096
	ds_read_b128 v[106:109], v76 offset:4096
	ds_read_b128 v[110:113], v77 offset:6144
	ds_read_b128 v[114:117], v76 offset:6144
	ds_read_b128 v[118:121], v81 offset:32768
	ds_read_b128 v[122:125], v82 offset:32768
	ds_read_b128 v[126:129], v81 offset:34816
	ds_read_b128 v[130:133], v82 offset:34816
	ds_read_b128 v[134:137], v81 offset:36864
	ds_read_b128 v[138:141], v82 offset:36864
	ds_read_b128 v[142:145], v81 offset:38912
	ds_read_b128 v[146:149], v82 offset:38912
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v68, s[16:19], s25 offen lds
	s_mov_b32 m0, s6
	s_mov_b32 s6, s18
	buffer_load_dwordx4 v69, s[16:19], s25 offen lds
	s_mov_b32 m0, s7
	v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[84:91], v[126:133], v[4:7], v100, v100 op_sel_hi:[0,0,0]
	buffer_load_dwordx4 v70, s[16:19], s25 offen lds
	s_mov_b32 m0, s10
	s_mov_b32 s10, s18
	buffer_load_dwordx4 v71, s[16:19], s25 offen lds
	s_mov_b32 m0, s11
	s_mov_b32 s11, s19
	buffer_load_dwordx4 v72, s[20:23], s25 offen lds
	v_mfma_scale_f32_16x16x128_f8f6f4 v[60:63], v[110:117], v[134:141], v[60:63], v100, v100 op_sel_hi:[0,0,0]
	s_mov_b32 m0, s14
	s_mov_b32 s14, s18
	buffer_load_dwordx4 v73, s[20:23], s25 offen lds
	s_mov_b32 m0, s15
	s_mov_b32 s15, s19
	buffer_load_dwordx4 v74, s[20:23], s25 offen lds
	s_mov_b32 m0, s24
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[84:91], v[118:125], v[0:3], v100, v100 op_sel_hi:[0,0,0]
	buffer_load_dwordx4 v75, s[20:23], s25 offen lds
	s_waitcnt vmcnt(8)
	s_barrier
	s_mov_b32 s7, s19
	v_mfma_scale_f32_16x16x128_f8f6f4 v[8:11], v[84:91], v[134:141], v[8:11], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[12:15], v[84:91], v[142:149], v[12:15], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[16:19], v[92:99], v[118:125], v[16:19], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[20:23], v[92:99], v[126:133], v[20:23], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[24:27], v[92:99], v[134:141], v[24:27], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[28:31], v[92:99], v[142:149], v[28:31], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[32:35], v[102:109], v[118:125], v[32:35], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[36:39], v[102:109], v[126:133], v[36:39], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[40:43], v[102:109], v[134:141], v[40:43], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[44:47], v[102:109], v[142:149], v[44:47], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[48:51], v[110:117], v[118:125], v[48:51], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[52:55], v[110:117], v[126:133], v[52:55], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[64:67], v[110:117], v[142:149], v[64:67], v100, v100 op_sel_hi:[0,0,0]
	ds_read_b128 v[68:71], v78
	ds_read_b128 v[72:75], v80
	ds_read_b128 v[84:87], v78 offset:2048
	ds_read_b128 v[88:91], v80 offset:2048
	ds_read_b128 v[92:95], v78 offset:4096
	ds_read_b128 v[96:99], v80 offset:4096
	ds_read_b128 v[102:105], v78 offset:6144
	ds_read_b128 v[106:109], v80 offset:6144
	ds_read_b128 v[110:113], v81
	ds_read_b128 v[114:117], v82
	ds_read_b128 v[118:121], v81 offset:2048
	ds_read_b128 v[122:125], v82 offset:2048
	ds_read_b128 v[126:129], v81 offset:4096
	ds_read_b128 v[130:133], v82 offset:4096
	ds_read_b128 v[134:137], v81 offset:6144
	ds_read_b128 v[138:141], v82 offset:6144
	s_barrier
	ds_read_b128 v[142:145], v77
	ds_read_b128 v[146:149], v76
	ds_read_b128 v[150:153], v77 offset:2048
	ds_read_b128 v[154:157], v76 offset:2048
	ds_read_b128 v[158:161], v77 offset:4096
	ds_read_b128 v[162:165], v76 offset:4096
	ds_read_b128 v[166:169], v77 offset:6144
	ds_read_b128 v[170:173], v76 offset:6144
	ds_read_b128 v[174:177], v81 offset:32768
	ds_read_b128 v[178:181], v82 offset:32768
	ds_read_b128 v[182:185], v81 offset:34816
	ds_read_b128 v[186:189], v82 offset:34816
	ds_read_b128 v[190:193], v81 offset:36864
	ds_read_b128 v[194:197], v82 offset:36864
	ds_read_b128 v[198:201], v81 offset:38912
	ds_read_b128 v[202:205], v82 offset:38912
	s_waitcnt vmcnt(0)
	s_barrier
	v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[68:75], v[118:125], v[4:7], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[60:63], v[102:109], v[126:133], v[60:63], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[68:75], v[110:117], v[0:3], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[8:11], v[68:75], v[126:133], v[8:11], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[12:15], v[68:75], v[134:141], v[12:15], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[68:71], v[92:99], v[110:117], v[32:35], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[72:75], v[92:99], v[118:125], v[36:39], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[76:79], v[92:99], v[126:133], v[40:43], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[80:83], v[92:99], v[134:141], v[44:47], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt lgkmcnt(4)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[96:99], v[142:149], v[182:189], v[4:7], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt lgkmcnt(2)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[4:7], v[166:173], v[190:197], v[60:63], v100, v100 op_sel_hi:[0,0,0]
	s_nop 6
	v_lshlrev_b32_e32 v63, 2, v59
	v_lshlrev_b32_e32 v62, 2, v58
	buffer_load_dword v56, v63, s[8:11], 0 offen
	buffer_load_dword v60, v62, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[92:95], v[142:149], v[174:181], v[0:3], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[64:67], v[102:109], v[134:141], v[64:67], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 9
	v_mul_f32_e32 v56, v92, v56
	s_waitcnt lgkmcnt(0)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[166:173], v[198:205], v[64:67], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v56, v60, v56
	v_cvt_pk_bf16_f32 v56, v56, s0
	s_nop 3
	v_mul_lo_u32 v64, v59, s3
	v_add_lshl_u32 v57, v64, v58, 1
	buffer_store_short v56, v57, s[4:7], 0 offen
	v_or_b32_e32 v56, 1, v59
	v_lshlrev_b32_e32 v65, 2, v56
	buffer_load_dword v57, v65, s[8:11], 0 offen
	v_mul_lo_u32 v66, v56, s3
	v_add_lshl_u32 v56, v66, v58, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[28:31], v[84:91], v[134:141], v[28:31], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v57, v93, v57
	v_mul_f32_e32 v57, v60, v57
	v_cvt_pk_bf16_f32 v57, v57, s0
	buffer_store_short v57, v56, s[4:7], 0 offen
	v_or_b32_e32 v56, 2, v59
	v_lshlrev_b32_e32 v67, 2, v56
	buffer_load_dword v57, v67, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[32:35], v[150:157], v[198:205], v[28:31], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v57, v94, v57
	v_mfma_scale_f32_16x16x128_f8f6f4 v[28:31], v[158:165], v[174:181], v[68:71], v100, v100 op_sel_hi:[0,0,0]
	v_mul_f32_e32 v57, v60, v57
	v_cvt_pk_bf16_f32 v57, v57, s0
	s_nop 4
	v_mul_lo_u32 v68, v56, s3
	v_add_lshl_u32 v56, v68, v58, 1
	buffer_store_short v57, v56, s[4:7], 0 offen
	v_or_b32_e32 v56, 3, v59
	v_lshlrev_b32_e32 v69, 2, v56
	buffer_load_dword v57, v69, s[8:11], 0 offen
	v_mul_lo_u32 v70, v56, s3
	v_add_lshl_u32 v56, v70, v58, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[24:27], v[84:91], v[126:133], v[24:27], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v57, v95, v57
	v_mul_f32_e32 v57, v60, v57
	v_cvt_pk_bf16_f32 v57, v57, s0
	buffer_store_short v57, v56, s[4:7], 0 offen
	v_or_b32_e32 v56, 16, v58
	v_lshlrev_b32_e32 v60, 2, v56
	buffer_load_dword v57, v60, s[12:15], 0 offen
	buffer_load_dword v61, v63, s[8:11], 0 offen
	v_add_lshl_u32 v71, v64, v56, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[36:39], v[150:157], v[190:197], v[24:27], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v61, v96, v61
	v_mul_f32_e32 v61, v57, v61
	v_cvt_pk_bf16_f32 v61, v61, s0
	buffer_store_short v61, v71, s[4:7], 0 offen
	buffer_load_dword v61, v65, s[8:11], 0 offen
	v_add_lshl_u32 v71, v66, v56, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[24:27], v[158:165], v[182:189], v[72:75], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v61, v97, v61
	v_mul_f32_e32 v61, v57, v61
	v_cvt_pk_bf16_f32 v61, v61, s0
	buffer_store_short v61, v71, s[4:7], 0 offen
	buffer_load_dword v61, v67, s[8:11], 0 offen
	v_add_lshl_u32 v71, v68, v56, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[16:19], v[84:91], v[110:117], v[16:19], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v61, v98, v61
	v_mul_f32_e32 v61, v57, v61
	v_cvt_pk_bf16_f32 v61, v61, s0
	buffer_store_short v61, v71, s[4:7], 0 offen
	buffer_load_dword v61, v69, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[20:23], v[84:91], v[118:125], v[20:23], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v61, v99, v61
	v_mul_f32_e32 v57, v57, v61
	v_cvt_pk_bf16_f32 v57, v57, s0
	v_add_lshl_u32 v61, v70, v56, 1
	buffer_store_short v57, v61, s[4:7], 0 offen
	v_or_b32_e32 v57, 32, v58
	v_lshlrev_b32_e32 v61, 2, v57
	buffer_load_dword v71, v61, s[12:15], 0 offen
	buffer_load_dword v72, v63, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[88:91], v[102:109], v[118:125], v[52:55], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[52:55], v[142:149], v[190:197], v[8:11], v100, v100 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[84:87], v[102:109], v[110:117], v[48:51], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	s_nop 9
	v_mul_f32_e32 v52, v52, v72
	v_mul_f32_e32 v52, v71, v52
	v_cvt_pk_bf16_f32 v52, v52, s0
	v_add_lshl_u32 v72, v64, v57, 1
	buffer_store_short v52, v72, s[4:7], 0 offen
	buffer_load_dword v52, v65, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[48:51], v[142:149], v[198:205], v[12:15], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v52, v53, v52
	v_mul_f32_e32 v52, v71, v52
	v_cvt_pk_bf16_f32 v52, v52, s0
	v_add_lshl_u32 v53, v66, v57, 1
	buffer_store_short v52, v53, s[4:7], 0 offen
	buffer_load_dword v52, v67, s[8:11], 0 offen
	v_add_lshl_u32 v53, v68, v57, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[44:47], v[150:157], v[174:181], v[16:19], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v52, v54, v52
	v_mul_f32_e32 v52, v71, v52
	v_cvt_pk_bf16_f32 v52, v52, s0
	buffer_store_short v52, v53, s[4:7], 0 offen
	buffer_load_dword v52, v69, s[8:11], 0 offen
	v_add_lshl_u32 v53, v70, v57, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[40:43], v[150:157], v[182:189], v[20:23], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v52, v55, v52
	v_mul_f32_e32 v52, v71, v52
	v_cvt_pk_bf16_f32 v52, v52, s0
	buffer_store_short v52, v53, s[4:7], 0 offen
	v_or_b32_e32 v52, 48, v58
	v_lshlrev_b32_e32 v53, 2, v52
	buffer_load_dword v54, v53, s[12:15], 0 offen
	buffer_load_dword v55, v63, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[20:23], v[158:165], v[190:197], v[76:79], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v48, v48, v55
	v_mul_f32_e32 v48, v54, v48
	v_cvt_pk_bf16_f32 v48, v48, s0
	v_add_lshl_u32 v55, v64, v52, 1
	buffer_store_short v48, v55, s[4:7], 0 offen
	buffer_load_dword v48, v65, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[16:19], v[158:165], v[198:205], v[80:83], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v48, v49, v48
	v_mul_f32_e32 v48, v54, v48
	v_cvt_pk_bf16_f32 v48, v48, s0
	v_add_lshl_u32 v49, v66, v52, 1
	buffer_store_short v48, v49, s[4:7], 0 offen
	buffer_load_dword v48, v67, s[8:11], 0 offen
	v_add_lshl_u32 v49, v68, v52, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[12:15], v[166:173], v[174:181], v[84:87], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v48, v50, v48
	v_mul_f32_e32 v48, v54, v48
	v_cvt_pk_bf16_f32 v48, v48, s0
	buffer_store_short v48, v49, s[4:7], 0 offen
	buffer_load_dword v48, v69, s[8:11], 0 offen
	v_add_lshl_u32 v49, v70, v52, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[8:11], v[166:173], v[182:189], v[88:91], v100, v100 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v48, v51, v48
	v_mul_f32_e32 v48, v54, v48
	v_cvt_pk_bf16_f32 v48, v48, s0
	buffer_store_short v48, v49, s[4:7], 0 offen
	v_or_b32_e32 v49, 16, v59
	v_lshlrev_b32_e32 v50, 2, v49
	buffer_load_dword v51, v50, s[8:11], 0 offen
	buffer_load_dword v48, v62, s[12:15], 0 offen
	v_mul_lo_u32 v49, v49, s3
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v44, v44, v51
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v44, v48, v44
	v_cvt_pk_bf16_f32 v44, v44, s0
	v_add_lshl_u32 v51, v49, v58, 1
	buffer_store_short v44, v51, s[4:7], 0 offen
	v_or_b32_e32 v44, 17, v59
	v_lshlrev_b32_e32 v51, 2, v44
	buffer_load_dword v54, v51, s[8:11], 0 offen
	v_mul_lo_u32 v44, v44, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v45, v45, v54
	v_mul_f32_e32 v45, v48, v45
	v_cvt_pk_bf16_f32 v45, v45, s0
	v_add_lshl_u32 v54, v44, v58, 1
	buffer_store_short v45, v54, s[4:7], 0 offen
	v_or_b32_e32 v45, 18, v59
	v_lshlrev_b32_e32 v54, 2, v45
	buffer_load_dword v55, v54, s[8:11], 0 offen
	v_mul_lo_u32 v45, v45, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v46, v46, v55
	v_mul_f32_e32 v46, v48, v46
	v_cvt_pk_bf16_f32 v46, v46, s0
	v_add_lshl_u32 v55, v45, v58, 1
	buffer_store_short v46, v55, s[4:7], 0 offen
	v_or_b32_e32 v46, 19, v59
	v_lshlrev_b32_e32 v55, 2, v46
	buffer_load_dword v63, v55, s[8:11], 0 offen
	v_mul_lo_u32 v46, v46, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v47, v47, v63
	v_mul_f32_e32 v47, v48, v47
	v_cvt_pk_bf16_f32 v47, v47, s0
	v_add_lshl_u32 v48, v46, v58, 1
	buffer_store_short v47, v48, s[4:7], 0 offen
	buffer_load_dword v47, v60, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v48, v50, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v40, v40, v48
	v_mul_f32_e32 v40, v47, v40
	v_cvt_pk_bf16_f32 v40, v40, s0
	v_add_lshl_u32 v48, v49, v56, 1
	buffer_store_short v40, v48, s[4:7], 0 offen
	buffer_load_dword v40, v51, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v40, v41, v40
	v_mul_f32_e32 v40, v47, v40
	v_cvt_pk_bf16_f32 v40, v40, s0
	v_add_lshl_u32 v41, v44, v56, 1
	buffer_store_short v40, v41, s[4:7], 0 offen
	buffer_load_dword v40, v54, s[8:11], 0 offen
	v_add_lshl_u32 v41, v45, v56, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v40, v42, v40
	v_mul_f32_e32 v40, v47, v40
	v_cvt_pk_bf16_f32 v40, v40, s0
	buffer_store_short v40, v41, s[4:7], 0 offen
	buffer_load_dword v40, v55, s[8:11], 0 offen
	v_add_lshl_u32 v41, v46, v56, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v40, v43, v40
	v_mul_f32_e32 v40, v47, v40
	v_cvt_pk_bf16_f32 v40, v40, s0
	buffer_store_short v40, v41, s[4:7], 0 offen
	buffer_load_dword v40, v61, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v41, v50, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v36, v36, v41
	v_mul_f32_e32 v36, v40, v36
	v_cvt_pk_bf16_f32 v36, v36, s0
	v_add_lshl_u32 v41, v49, v57, 1
	buffer_store_short v36, v41, s[4:7], 0 offen
	buffer_load_dword v36, v51, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v36, v37, v36
	v_mul_f32_e32 v36, v40, v36
	v_cvt_pk_bf16_f32 v36, v36, s0
	v_add_lshl_u32 v37, v44, v57, 1
	buffer_store_short v36, v37, s[4:7], 0 offen
	buffer_load_dword v36, v54, s[8:11], 0 offen
	v_add_lshl_u32 v37, v45, v57, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v36, v38, v36
	v_mul_f32_e32 v36, v40, v36
	v_cvt_pk_bf16_f32 v36, v36, s0
	buffer_store_short v36, v37, s[4:7], 0 offen
	buffer_load_dword v36, v55, s[8:11], 0 offen
	v_add_lshl_u32 v37, v46, v57, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v36, v39, v36
	v_mul_f32_e32 v36, v40, v36
	v_cvt_pk_bf16_f32 v36, v36, s0
	buffer_store_short v36, v37, s[4:7], 0 offen
	buffer_load_dword v36, v53, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v37, v50, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v32, v32, v37
	v_mul_f32_e32 v32, v36, v32
	v_cvt_pk_bf16_f32 v32, v32, s0
	v_add_lshl_u32 v37, v49, v52, 1
	buffer_store_short v32, v37, s[4:7], 0 offen
	buffer_load_dword v32, v51, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v32, v33, v32
	v_mul_f32_e32 v32, v36, v32
	v_cvt_pk_bf16_f32 v32, v32, s0
	v_add_lshl_u32 v33, v44, v52, 1
	buffer_store_short v32, v33, s[4:7], 0 offen
	buffer_load_dword v32, v54, s[8:11], 0 offen
	v_add_lshl_u32 v33, v45, v52, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v32, v34, v32
	v_mul_f32_e32 v32, v36, v32
	v_cvt_pk_bf16_f32 v32, v32, s0
	buffer_store_short v32, v33, s[4:7], 0 offen
	buffer_load_dword v32, v55, s[8:11], 0 offen
	v_add_lshl_u32 v33, v46, v52, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v32, v35, v32
	v_mul_f32_e32 v32, v36, v32
	v_cvt_pk_bf16_f32 v32, v32, s0
	buffer_store_short v32, v33, s[4:7], 0 offen
	v_or_b32_e32 v33, 32, v59
	v_lshlrev_b32_e32 v34, 2, v33
	buffer_load_dword v35, v34, s[8:11], 0 offen
	buffer_load_dword v32, v62, s[12:15], 0 offen
	v_mul_lo_u32 v33, v33, s3
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v28, v28, v35
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v28, v32, v28
	v_cvt_pk_bf16_f32 v28, v28, s0
	v_add_lshl_u32 v35, v33, v58, 1
	buffer_store_short v28, v35, s[4:7], 0 offen
	v_or_b32_e32 v28, 33, v59
	v_lshlrev_b32_e32 v35, 2, v28
	buffer_load_dword v36, v35, s[8:11], 0 offen
	v_mul_lo_u32 v28, v28, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v29, v29, v36
	v_mul_f32_e32 v29, v32, v29
	v_cvt_pk_bf16_f32 v29, v29, s0
	v_add_lshl_u32 v36, v28, v58, 1
	buffer_store_short v29, v36, s[4:7], 0 offen
	v_or_b32_e32 v29, 34, v59
	v_lshlrev_b32_e32 v36, 2, v29
	buffer_load_dword v37, v36, s[8:11], 0 offen
	v_mul_lo_u32 v29, v29, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v30, v30, v37
	v_mul_f32_e32 v30, v32, v30
	v_cvt_pk_bf16_f32 v30, v30, s0
	v_add_lshl_u32 v37, v29, v58, 1
	buffer_store_short v30, v37, s[4:7], 0 offen
	v_or_b32_e32 v30, 35, v59
	v_lshlrev_b32_e32 v37, 2, v30
	buffer_load_dword v38, v37, s[8:11], 0 offen
	v_mul_lo_u32 v30, v30, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v31, v31, v38
	v_mul_f32_e32 v31, v32, v31
	v_cvt_pk_bf16_f32 v31, v31, s0
	v_add_lshl_u32 v32, v30, v58, 1
	buffer_store_short v31, v32, s[4:7], 0 offen
	buffer_load_dword v31, v60, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v32, v34, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v24, v24, v32
	v_mul_f32_e32 v24, v31, v24
	v_cvt_pk_bf16_f32 v24, v24, s0
	v_add_lshl_u32 v32, v33, v56, 1
	buffer_store_short v24, v32, s[4:7], 0 offen
	buffer_load_dword v24, v35, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v24, v25, v24
	v_mul_f32_e32 v24, v31, v24
	v_cvt_pk_bf16_f32 v24, v24, s0
	v_add_lshl_u32 v25, v28, v56, 1
	buffer_store_short v24, v25, s[4:7], 0 offen
	buffer_load_dword v24, v36, s[8:11], 0 offen
	v_add_lshl_u32 v25, v29, v56, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v24, v26, v24
	v_mul_f32_e32 v24, v31, v24
	v_cvt_pk_bf16_f32 v24, v24, s0
	buffer_store_short v24, v25, s[4:7], 0 offen
	buffer_load_dword v24, v37, s[8:11], 0 offen
	v_add_lshl_u32 v25, v30, v56, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v24, v27, v24
	v_mul_f32_e32 v24, v31, v24
	v_cvt_pk_bf16_f32 v24, v24, s0
	buffer_store_short v24, v25, s[4:7], 0 offen
	buffer_load_dword v24, v61, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v25, v34, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v20, v20, v25
	v_mul_f32_e32 v20, v24, v20
	v_cvt_pk_bf16_f32 v20, v20, s0
	v_add_lshl_u32 v25, v33, v57, 1
	buffer_store_short v20, v25, s[4:7], 0 offen
	buffer_load_dword v20, v35, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v20, v21, v20
	v_mul_f32_e32 v20, v24, v20
	v_cvt_pk_bf16_f32 v20, v20, s0
	v_add_lshl_u32 v21, v28, v57, 1
	buffer_store_short v20, v21, s[4:7], 0 offen
	buffer_load_dword v20, v36, s[8:11], 0 offen
	v_add_lshl_u32 v21, v29, v57, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v20, v22, v20
	v_mul_f32_e32 v20, v24, v20
	v_cvt_pk_bf16_f32 v20, v20, s0
	buffer_store_short v20, v21, s[4:7], 0 offen
	buffer_load_dword v20, v37, s[8:11], 0 offen
	v_add_lshl_u32 v21, v30, v57, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v20, v23, v20
	v_mul_f32_e32 v20, v24, v20
	v_cvt_pk_bf16_f32 v20, v20, s0
	buffer_store_short v20, v21, s[4:7], 0 offen
	buffer_load_dword v20, v53, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v21, v34, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v16, v16, v21
	v_mul_f32_e32 v16, v20, v16
	v_cvt_pk_bf16_f32 v16, v16, s0
	v_add_lshl_u32 v21, v33, v52, 1
	buffer_store_short v16, v21, s[4:7], 0 offen
	buffer_load_dword v16, v35, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v16, v17, v16
	v_mul_f32_e32 v16, v20, v16
	v_cvt_pk_bf16_f32 v16, v16, s0
	v_add_lshl_u32 v17, v28, v52, 1
	buffer_store_short v16, v17, s[4:7], 0 offen
	buffer_load_dword v16, v36, s[8:11], 0 offen
	v_add_lshl_u32 v17, v29, v52, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v16, v18, v16
	v_mul_f32_e32 v16, v20, v16
	v_cvt_pk_bf16_f32 v16, v16, s0
	buffer_store_short v16, v17, s[4:7], 0 offen
	buffer_load_dword v16, v37, s[8:11], 0 offen
	v_add_lshl_u32 v17, v30, v52, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v16, v19, v16
	v_mul_f32_e32 v16, v20, v16
	v_cvt_pk_bf16_f32 v16, v16, s0
	buffer_store_short v16, v17, s[4:7], 0 offen
	v_or_b32_e32 v17, 48, v59
	v_lshlrev_b32_e32 v18, 2, v17
	buffer_load_dword v19, v18, s[8:11], 0 offen
	buffer_load_dword v16, v62, s[12:15], 0 offen
	v_mul_lo_u32 v17, v17, s3
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v12, v12, v19
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v12, v16, v12
	v_cvt_pk_bf16_f32 v12, v12, s0
	v_add_lshl_u32 v19, v17, v58, 1
	buffer_store_short v12, v19, s[4:7], 0 offen
	v_or_b32_e32 v12, 49, v59
	v_lshlrev_b32_e32 v19, 2, v12
	buffer_load_dword v20, v19, s[8:11], 0 offen
	v_mul_lo_u32 v12, v12, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v13, v13, v20
	v_mul_f32_e32 v13, v16, v13
	v_cvt_pk_bf16_f32 v13, v13, s0
	v_add_lshl_u32 v20, v12, v58, 1
	buffer_store_short v13, v20, s[4:7], 0 offen
	v_or_b32_e32 v13, 50, v59
	v_lshlrev_b32_e32 v20, 2, v13
	buffer_load_dword v21, v20, s[8:11], 0 offen
	v_mul_lo_u32 v13, v13, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v14, v14, v21
	v_mul_f32_e32 v14, v16, v14
	v_cvt_pk_bf16_f32 v14, v14, s0
	v_add_lshl_u32 v21, v13, v58, 1
	buffer_store_short v14, v21, s[4:7], 0 offen
	v_or_b32_e32 v14, 51, v59
	v_lshlrev_b32_e32 v21, 2, v14
	buffer_load_dword v22, v21, s[8:11], 0 offen
	v_mul_lo_u32 v14, v14, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v15, v15, v22
	v_mul_f32_e32 v15, v16, v15
	v_cvt_pk_bf16_f32 v15, v15, s0
	v_add_lshl_u32 v16, v14, v58, 1
	buffer_store_short v15, v16, s[4:7], 0 offen
	buffer_load_dword v15, v60, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v16, v18, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v8, v8, v16
	v_mul_f32_e32 v8, v15, v8
	v_cvt_pk_bf16_f32 v8, v8, s0
	v_add_lshl_u32 v16, v17, v56, 1
	buffer_store_short v8, v16, s[4:7], 0 offen
	buffer_load_dword v8, v19, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v8, v9, v8
	v_mul_f32_e32 v8, v15, v8
	v_cvt_pk_bf16_f32 v8, v8, s0
	v_add_lshl_u32 v9, v12, v56, 1
	buffer_store_short v8, v9, s[4:7], 0 offen
	buffer_load_dword v8, v20, s[8:11], 0 offen
	v_add_lshl_u32 v9, v13, v56, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v8, v10, v8
	v_mul_f32_e32 v8, v15, v8
	v_cvt_pk_bf16_f32 v8, v8, s0
	buffer_store_short v8, v9, s[4:7], 0 offen
	buffer_load_dword v8, v21, s[8:11], 0 offen
	v_add_lshl_u32 v9, v14, v56, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v8, v11, v8
	v_mul_f32_e32 v8, v15, v8
	v_cvt_pk_bf16_f32 v8, v8, s0
	buffer_store_short v8, v9, s[4:7], 0 offen
	buffer_load_dword v8, v61, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v9, v18, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v4, v9
	v_mul_f32_e32 v4, v8, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	v_add_lshl_u32 v9, v17, v57, 1
	buffer_store_short v4, v9, s[4:7], 0 offen
	buffer_load_dword v4, v19, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v5, v4
	v_mul_f32_e32 v4, v8, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	v_add_lshl_u32 v5, v12, v57, 1
	buffer_store_short v4, v5, s[4:7], 0 offen
	buffer_load_dword v4, v20, s[8:11], 0 offen
	v_add_lshl_u32 v5, v13, v57, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v6, v4
	v_mul_f32_e32 v4, v8, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v5, s[4:7], 0 offen
	buffer_load_dword v4, v21, s[8:11], 0 offen
	v_add_lshl_u32 v5, v14, v57, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v7, v4
	v_mul_f32_e32 v4, v8, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v5, s[4:7], 0 offen
	buffer_load_dword v4, v53, s[12:15], 0 offen
	s_nop 0
	buffer_load_dword v5, v18, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v0, v5
	v_mul_f32_e32 v0, v4, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	v_add_lshl_u32 v5, v17, v52, 1
	buffer_store_short v0, v5, s[4:7], 0 offen
	buffer_load_dword v0, v19, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v1, v0
	v_mul_f32_e32 v0, v4, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	v_add_lshl_u32 v1, v12, v52, 1
	buffer_store_short v0, v1, s[4:7], 0 offen
	buffer_load_dword v0, v20, s[8:11], 0 offen
	v_add_lshl_u32 v1, v13, v52, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v2, v0
	v_mul_f32_e32 v0, v4, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	buffer_store_short v0, v1, s[4:7], 0 offen
	buffer_load_dword v0, v21, s[8:11], 0 offen
	v_add_lshl_u32 v1, v14, v52, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v3, v0
	v_mul_f32_e32 v0, v4, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	buffer_store_short v0, v1, s[4:7], 0 offen
	s_endpgm
.Lfunc_end0:
	.size	fp8_tail_gemm_0, .Lfunc_end0-fp8_tail_gemm_0
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel fp8_tail_gemm_0
		.amdhsa_group_segment_fixed_size 65536
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 84
		.amdhsa_user_sgpr_count 2
		.amdhsa_user_sgpr_dispatch_ptr 0
		.amdhsa_user_sgpr_queue_ptr 0
		.amdhsa_user_sgpr_kernarg_segment_ptr 1
		.amdhsa_user_sgpr_dispatch_id 0
		.amdhsa_user_sgpr_kernarg_preload_length 0
		.amdhsa_user_sgpr_kernarg_preload_offset 0
		.amdhsa_user_sgpr_private_segment_size 0
		.amdhsa_uses_dynamic_stack 0
		.amdhsa_enable_private_segment 0
		.amdhsa_system_sgpr_workgroup_id_x 1
		.amdhsa_system_sgpr_workgroup_id_y 0
		.amdhsa_system_sgpr_workgroup_id_z 0
		.amdhsa_system_sgpr_workgroup_info 0
		.amdhsa_system_vgpr_workitem_id 0
		.amdhsa_next_free_vgpr 206
		.amdhsa_next_free_sgpr 96
		.amdhsa_accum_offset 208
		.amdhsa_reserve_vcc 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_round_mode_16_64 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
		.amdhsa_dx10_clamp 1
		.amdhsa_ieee_mode 1
		.amdhsa_fp16_overflow 0
		.amdhsa_tg_split 0
		.amdhsa_exception_fp_ieee_invalid_op 0
		.amdhsa_exception_fp_denorm_src 0
		.amdhsa_exception_fp_ieee_div_zero 0
		.amdhsa_exception_fp_ieee_overflow 0
		.amdhsa_exception_fp_ieee_underflow 0
		.amdhsa_exception_fp_ieee_inexact 0
		.amdhsa_exception_int_div_zero 0
	.end_amdhsa_kernel
	.text

	.set .Lfp8_tail_gemm_0.num_vgpr, 206
	.set .Lfp8_tail_gemm_0.num_agpr, 0
	.set .Lfp8_tail_gemm_0.numbered_sgpr, 35
	.set .Lfp8_tail_gemm_0.num_named_barrier, 0
	.set .Lfp8_tail_gemm_0.private_seg_size, 0
	.set .Lfp8_tail_gemm_0.uses_vcc, 0
	.set .Lfp8_tail_gemm_0.uses_flat_scratch, 0
	.set .Lfp8_tail_gemm_0.has_dyn_sized_stack, 0
	.set .Lfp8_tail_gemm_0.has_recursion, 0
	.set .Lfp8_tail_gemm_0.has_indirect_call, 0
	.p2alignl 6, 3212836864
	.fill 256, 4, 3212836864
	.section	.AMDGPU.gpr_maximums,"",@progbits
	.set amdgpu.max_num_vgpr, 0
	.set amdgpu.max_num_agpr, 0
	.set amdgpu.max_num_sgpr, 0
	.set amdgpu.max_num_named_barrier, 0
	.text
	.section	".note.GNU-stack","",@progbits
	.amdgpu_metadata
---
amdhsa.kernels:
  - .agpr_count:     0
    .args:
      - .address_space:  global
        .offset:         0
        .size:           8
        .value_kind:     global_buffer
      - .offset:         8
        .size:           4
        .value_kind:     by_value
      - .address_space:  global
        .offset:         16
        .size:           8
        .value_kind:     global_buffer
      - .offset:         24
        .size:           4
        .value_kind:     by_value
      - .address_space:  global
        .offset:         32
        .size:           8
        .value_kind:     global_buffer
      - .offset:         40
        .size:           4
        .value_kind:     by_value
      - .address_space:  global
        .offset:         48
        .size:           8
        .value_kind:     global_buffer
      - .offset:         56
        .size:           4
        .value_kind:     by_value
      - .address_space:  global
        .offset:         64
        .size:           8
        .value_kind:     global_buffer
      - .offset:         72
        .size:           4
        .value_kind:     by_value
      - .offset:         76
        .size:           4
        .value_kind:     by_value
      - .offset:         80
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 65536
    .kernarg_segment_align: 8
    .kernarg_segment_size: 84
    .max_flat_workgroup_size: 256
    .name:           fp8_tail_gemm_0
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
    .sgpr_count:     41
    .sgpr_spill_count: 0
    .symbol:         fp8_tail_gemm_0.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     206
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
