	.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	fp8_tail_gemm_0
	.p2align	8
	.type	fp8_tail_gemm_0,@function
fp8_tail_gemm_0:
	s_load_dword s3, s[0:1], 0x50
	s_load_dwordx2 s[12:13], s[0:1], 0x40
	v_lshrrev_b32_e32 v2, 6, v0
	v_or_b32_e32 v7, 4, v2
	v_or_b32_e32 v10, 8, v2
	s_waitcnt lgkmcnt(0)
	s_ashr_i32 s4, s3, 31
	s_lshr_b32 s4, s4, 25
	s_add_i32 s4, s3, s4
	s_ashr_i32 s8, s4, 7
	s_and_b32 s4, s4, 0xffffff80
	s_cmp_lg_u32 s3, s4
	s_cselect_b64 s[4:5], -1, 0
	s_cmp_lt_i32 s3, 0
	s_cselect_b64 s[6:7], -1, 0
	s_and_b64 s[4:5], s[6:7], s[4:5]
	s_subb_u32 s6, s8, 0
	s_abs_i32 s7, s6
	v_cvt_f32_u32_e32 v1, s7
	s_load_dwordx2 s[16:17], s[0:1], 0x0
	s_load_dwordx2 s[20:21], s[0:1], 0x10
	s_load_dwordx2 s[4:5], s[0:1], 0x20
	s_load_dwordx2 s[8:9], s[0:1], 0x30
	s_sub_i32 s1, 0, s7
	s_abs_i32 s0, s2
	v_rcp_f32_e32 v1, v1
	s_xor_b32 s10, s6, s2
	s_ashr_i32 s11, s10, 31
	v_or_b32_e32 v13, 12, v2
	v_mul_f32_e32 v1, 0x4f7ffffe, v1
	v_cvt_u32_f32_e32 v1, v1
	s_mov_b32 s19, 0x27000
	s_mov_b32 s18, -1
	s_mov_b32 s22, s18
	v_readfirstlane_b32 s14, v1
	s_mul_i32 s1, s1, s14
	s_mul_hi_u32 s1, s14, s1
	s_add_i32 s14, s14, s1
	s_mul_hi_u32 s1, s0, s14
	s_mul_i32 s14, s1, s7
	s_sub_i32 s0, s0, s14
	s_add_i32 s14, s1, 1
	s_sub_i32 s15, s0, s7
	s_cmp_ge_u32 s0, s7
	s_cselect_b32 s1, s14, s1
	s_cselect_b32 s0, s15, s0
	s_add_i32 s14, s1, 1
	s_cmp_ge_u32 s0, s7
	s_cselect_b32 s0, s14, s1
	s_xor_b32 s14, s0, s11
	s_sub_i32 s0, s14, s11
	s_mul_i32 s15, s0, s6
	s_cmp_lg_u32 s2, s15
	s_cselect_b64 s[0:1], -1, 0
	s_cmp_lt_i32 s10, 0
	s_cselect_b64 s[6:7], -1, 0
	s_and_b64 s[0:1], s[6:7], s[0:1]
	s_subb_u32 s0, s14, s11
	s_sub_i32 s1, s2, s15
	v_bfe_u32 v1, v0, 3, 3
	s_lshl_b32 s0, s0, 7
	v_lshl_or_b32 v3, v2, 3, v1
	v_bitop3_b32 v5, v1, v0, 7 bitop3:0x78
	v_lshl_or_b32 v8, v7, 3, v1
	v_lshl_or_b32 v11, v10, 3, v1
	v_lshl_or_b32 v1, v13, 3, v1
	s_lshl_b32 s1, s1, 7
	v_or_b32_e32 v6, s0, v3
	v_lshlrev_b32_e32 v5, 4, v5
	v_or_b32_e32 v9, s0, v8
	v_or_b32_e32 v12, s0, v11
	v_or_b32_e32 v14, s0, v1
	v_or_b32_e32 v3, s1, v3
	v_or_b32_e32 v8, s1, v8
	v_or_b32_e32 v11, s1, v11
	v_or_b32_e32 v1, s1, v1
	v_lshlrev_b32_e32 v2, 10, v2
	v_lshl_or_b32 v6, v6, 8, v5
	v_lshl_or_b32 v9, v9, 8, v5
	v_lshl_or_b32 v12, v12, 8, v5
	v_lshl_or_b32 v14, v14, 8, v5
	v_lshl_or_b32 v3, v3, 8, v5
	v_lshl_or_b32 v8, v8, 8, v5
	v_lshl_or_b32 v11, v11, 8, v5
	v_lshl_or_b32 v1, v1, 8, v5
	v_readfirstlane_b32 s2, v2
	v_lshlrev_b32_e32 v5, 10, v7
	v_or_b32_e32 v7, 0x1000, v2
	s_waitcnt lgkmcnt(0)
	s_and_b32 s17, s17, 0xffff
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v7
	v_lshlrev_b32_e32 v7, 10, v10
	v_or_b32_e32 v10, 0x2000, v2
	buffer_load_dwordx4 v6, s[16:19], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v10
	v_lshlrev_b32_e32 v10, 10, v13
	v_or_b32_e32 v13, 0x3000, v2
	buffer_load_dwordx4 v9, s[16:19], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v13
	v_or_b32_e32 v13, 0x4000, v2
	buffer_load_dwordx4 v12, s[16:19], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v13
	v_or_b32_e32 v13, 0x4000, v5
	s_and_b32 s21, s21, 0xffff
	s_mov_b32 s23, s19
	buffer_load_dwordx4 v14, s[16:19], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v13
	v_or_b32_e32 v13, 0x4000, v7
	buffer_load_dwordx4 v3, s[20:23], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v13
	v_or_b32_e32 v13, 0x4000, v10
	buffer_load_dwordx4 v8, s[20:23], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s2, v13
	v_or_b32_e32 v13, 0x8000, v2
	buffer_load_dwordx4 v11, s[20:23], 0 offen lds
	s_mov_b32 m0, s2
	v_readfirstlane_b32 s6, v13
	buffer_load_dwordx4 v1, s[20:23], 0 offen lds
	s_movk_i32 s2, 0x80
	s_mov_b32 m0, s6
	v_or_b32_e32 v2, 0xc000, v2
	buffer_load_dwordx4 v6, s[16:19], s2 offen lds
	v_or_b32_e32 v6, 0x8000, v5
	v_and_b32_e32 v4, 7, v0
	v_readfirstlane_b32 s6, v6
	v_or_b32_e32 v6, 0x8000, v7
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s6, v6
	v_or_b32_e32 v6, 0x8000, v10
	buffer_load_dwordx4 v9, s[16:19], s2 offen lds
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s6, v6
	buffer_load_dwordx4 v12, s[16:19], s2 offen lds
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s6, v2
	v_or_b32_e32 v2, 0xc000, v5
	buffer_load_dwordx4 v14, s[16:19], s2 offen lds
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s6, v2
	v_or_b32_e32 v2, 0xc000, v7
	buffer_load_dwordx4 v3, s[20:23], s2 offen lds
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s6, v2
	v_or_b32_e32 v2, 0xc000, v10
	buffer_load_dwordx4 v8, s[20:23], s2 offen lds
	s_mov_b32 m0, s6
	v_readfirstlane_b32 s6, v2
	buffer_load_dwordx4 v11, s[20:23], s2 offen lds
	s_mov_b32 m0, s6
	v_bfe_u32 v5, v0, 4, 2
	buffer_load_dwordx4 v1, s[20:23], s2 offen lds
	v_lshrrev_b32_e32 v1, 1, v0
	v_and_b32_e32 v2, 64, v1
	v_and_b32_e32 v1, 15, v0
	v_lshlrev_b32_e32 v6, 1, v5
	v_or_b32_e32 v3, v2, v1
	v_bitop3_b32 v7, v6, v0, 7 bitop3:0x78
	v_bitop3_b32 v4, v6, v4, 1 bitop3:0x36
	v_lshlrev_b32_e32 v3, 7, v3
	v_lshlrev_b32_e32 v7, 4, v7
	v_lshlrev_b32_e32 v4, 4, v4
	v_or_b32_e32 v8, v3, v7
	v_or_b32_e32 v6, v4, v3
	s_waitcnt vmcnt(8)
	s_barrier
	ds_read_b128 v[132:135], v8
	ds_read_b128 v[106:109], v8 offset:2048
	ds_read_b128 v[136:139], v6
	ds_read_b128 v[110:113], v6 offset:2048
	ds_read_b128 v[74:77], v8 offset:4096
	ds_read_b128 v[10:13], v8 offset:6144
	ds_read_b128 v[78:81], v6 offset:4096
	ds_read_b128 v[14:17], v6 offset:6144
	v_and_b32_e32 v6, 64, v0
	v_lshlrev_b32_e32 v0, 7, v0
	v_and_b32_e32 v0, 0x2780, v0
	v_or_b32_e32 v0, 0x4000, v0
	v_or_b32_e32 v3, 0x8000, v3
	v_or_b32_e32 v8, v7, v0
	v_or_b32_e32 v7, v3, v7
	v_or_b32_e32 v3, v4, v3
	v_or_b32_e32 v0, v4, v0
	ds_read_b128 v[58:61], v8
	ds_read_b128 v[42:45], v8 offset:2048
	ds_read_b128 v[62:65], v0
	ds_read_b128 v[46:49], v0 offset:2048
	ds_read_b128 v[26:29], v8 offset:4096
	ds_read_b128 v[18:21], v8 offset:6144
	ds_read_b128 v[30:33], v0 offset:4096
	ds_read_b128 v[22:25], v0 offset:6144
	s_barrier
	ds_read_b128 v[140:143], v7
	ds_read_b128 v[148:151], v7 offset:2048
	ds_read_b128 v[144:147], v3
	ds_read_b128 v[152:155], v3 offset:2048
	ds_read_b128 v[98:101], v7 offset:4096
	ds_read_b128 v[34:37], v7 offset:6144
	ds_read_b128 v[102:105], v3 offset:4096
	ds_read_b128 v[38:41], v3 offset:6144
	ds_read_b128 v[90:93], v8 offset:32768
	ds_read_b128 v[82:85], v8 offset:34816
	ds_read_b128 v[94:97], v0 offset:32768
	ds_read_b128 v[86:89], v0 offset:34816
	ds_read_b128 v[66:69], v8 offset:36864
	ds_read_b128 v[50:53], v8 offset:38912
	ds_read_b128 v[70:73], v0 offset:36864
	ds_read_b128 v[54:57], v0 offset:38912
	v_lshlrev_b32_e32 v3, 2, v5
	v_or3_b32 v5, v3, v2, s0
	s_and_b32 s9, s9, 0xffff
	s_mov_b32 s10, s18
	s_mov_b32 s11, s19
	v_or3_b32 v1, s1, v6, v1
	v_lshlrev_b32_e32 v122, 2, v5
	s_waitcnt vmcnt(0)
	s_barrier
	s_and_b32 s13, s13, 0xffff
	s_mov_b32 s14, s18
	s_mov_b32 s15, s19
	v_lshlrev_b32_e32 v9, 2, v1
	buffer_load_dword v2, v122, s[8:11], 0 offen
	buffer_load_dword v3, v9, s[12:15], 0 offen
	v_mov_b32_e32 v0, 0x7f7f7f7f
	v_mul_lo_u32 v123, v5, s3
	s_and_b32 s5, s5, 0xffff
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[132:139], v[58:65], 0, v0, v0 op_sel_hi:[0,0,0]
	s_mov_b32 s6, s18
	s_mov_b32 s7, s19
	v_add_lshl_u32 v4, v123, v1, 1
	v_or_b32_e32 v6, 3, v5
	v_lshlrev_b32_e32 v128, 2, v6
	v_mul_lo_u32 v129, v6, s3
	v_add_lshl_u32 v7, v129, v1, 1
	s_waitcnt lgkmcnt(5)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[140:147], v[90:97], v[114:117], v0, v0 op_sel_hi:[0,0,0]
	v_mfma_scale_f32_16x16x128_f8f6f4 v[118:121], v[132:139], v[42:49], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 9
	v_mul_f32_e32 v2, v114, v2
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v2, v3, v2
	v_cvt_pk_bf16_f32 v2, v2, s0
	buffer_store_short v2, v4, s[4:7], 0 offen
	v_or_b32_e32 v2, 1, v5
	v_lshlrev_b32_e32 v124, 2, v2
	buffer_load_dword v4, v124, s[8:11], 0 offen
	v_mul_lo_u32 v125, v2, s3
	v_add_lshl_u32 v2, v125, v1, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v115, v4
	v_mul_f32_e32 v4, v3, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v2, s[4:7], 0 offen
	v_or_b32_e32 v2, 2, v5
	v_lshlrev_b32_e32 v126, 2, v2
	buffer_load_dword v4, v126, s[8:11], 0 offen
	v_mul_lo_u32 v127, v2, s3
	v_add_lshl_u32 v2, v127, v1, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v116, v4
	v_mul_f32_e32 v4, v3, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v2, s[4:7], 0 offen
	buffer_load_dword v4, v128, s[8:11], 0 offen
	v_or_b32_e32 v2, 16, v1
	v_lshlrev_b32_e32 v6, 2, v2
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v117, v4
	v_mul_f32_e32 v3, v3, v4
	v_cvt_pk_bf16_f32 v3, v3, s0
	buffer_store_short v3, v7, s[4:7], 0 offen
	buffer_load_dword v3, v122, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v4, v6, s[12:15], 0 offen
	s_waitcnt lgkmcnt(4)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[140:147], v[82:89], v[118:121], v0, v0 op_sel_hi:[0,0,0]
	v_add_lshl_u32 v7, v123, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[118:121], v[132:139], v[26:33], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 8
	v_mul_f32_e32 v3, v114, v3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v3, v4, v3
	v_cvt_pk_bf16_f32 v3, v3, s0
	buffer_store_short v3, v7, s[4:7], 0 offen
	buffer_load_dword v3, v124, s[8:11], 0 offen
	v_add_lshl_u32 v7, v125, v2, 1
	v_add_lshl_u32 v114, v129, v2, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v3, v115, v3
	v_mul_f32_e32 v3, v4, v3
	v_cvt_pk_bf16_f32 v3, v3, s0
	buffer_store_short v3, v7, s[4:7], 0 offen
	buffer_load_dword v3, v126, s[8:11], 0 offen
	v_add_lshl_u32 v7, v127, v2, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v3, v116, v3
	v_mul_f32_e32 v3, v4, v3
	v_cvt_pk_bf16_f32 v3, v3, s0
	buffer_store_short v3, v7, s[4:7], 0 offen
	buffer_load_dword v8, v128, s[8:11], 0 offen
	v_or_b32_e32 v3, 32, v1
	v_lshlrev_b32_e32 v7, 2, v3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v8, v117, v8
	v_mul_f32_e32 v4, v4, v8
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v114, s[4:7], 0 offen
	buffer_load_dword v4, v122, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v130, v7, s[12:15], 0 offen
	s_waitcnt lgkmcnt(1)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[140:147], v[66:73], v[118:121], v0, v0 op_sel_hi:[0,0,0]
	v_add_lshl_u32 v8, v123, v3, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[118:121], v[132:139], v[18:25], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 8
	v_mul_f32_e32 v4, v114, v4
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v130, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v8, s[4:7], 0 offen
	buffer_load_dword v4, v124, s[8:11], 0 offen
	v_add_lshl_u32 v8, v125, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v115, v4
	v_mul_f32_e32 v4, v130, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v8, s[4:7], 0 offen
	buffer_load_dword v4, v126, s[8:11], 0 offen
	v_add_lshl_u32 v8, v127, v3, 1
	v_add_lshl_u32 v115, v129, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v4, v116, v4
	v_mul_f32_e32 v4, v130, v4
	v_cvt_pk_bf16_f32 v4, v4, s0
	buffer_store_short v4, v8, s[4:7], 0 offen
	buffer_load_dword v114, v128, s[8:11], 0 offen
	v_or_b32_e32 v4, 48, v1
	v_lshlrev_b32_e32 v8, 2, v4
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v117, v114
	v_mul_f32_e32 v114, v130, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v122, v122, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v130, v8, s[12:15], 0 offen
	s_waitcnt lgkmcnt(0)
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[140:147], v[50:57], v[118:121], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_add_lshl_u32 v118, v123, v4, 1
	s_waitcnt vmcnt(1)
	s_nop 2
	v_mul_f32_e32 v114, v114, v122
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v130, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v124, s[8:11], 0 offen
	v_add_lshl_u32 v118, v125, v4, 1
	v_or_b32_e32 v122, 16, v5
	v_lshlrev_b32_e32 v123, 2, v122
	v_mul_lo_u32 v122, v122, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v115, v114
	v_mul_f32_e32 v114, v130, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v126, s[8:11], 0 offen
	v_add_lshl_u32 v115, v127, v4, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[118:121], v[106:113], v[58:65], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v116, v114
	v_mul_f32_e32 v114, v130, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v114, v128, s[8:11], 0 offen
	v_add_lshl_u32 v115, v129, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v117, v114
	v_mul_f32_e32 v114, v130, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v124, v123, s[8:11], 0 offen
	buffer_load_dword v125, v9, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[148:155], v[90:97], v[118:121], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_or_b32_e32 v118, 17, v5
	v_add_lshl_u32 v119, v122, v1, 1
	v_lshlrev_b32_e32 v126, 2, v118
	s_waitcnt vmcnt(1)
	s_nop 0
	v_mul_f32_e32 v114, v114, v124
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v125, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v119, s[4:7], 0 offen
	buffer_load_dword v114, v126, s[8:11], 0 offen
	v_mul_lo_u32 v124, v118, s3
	v_or_b32_e32 v119, 18, v5
	v_add_lshl_u32 v118, v124, v1, 1
	v_lshlrev_b32_e32 v127, 2, v119
	v_mul_lo_u32 v128, v119, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v115, v114
	v_mul_f32_e32 v114, v125, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v127, s[8:11], 0 offen
	v_or_b32_e32 v115, 19, v5
	v_add_lshl_u32 v118, v128, v1, 1
	v_lshlrev_b32_e32 v129, 2, v115
	v_mul_lo_u32 v130, v115, s3
	v_add_lshl_u32 v115, v130, v1, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v116, v114
	v_mul_f32_e32 v114, v125, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v129, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[118:121], v[106:113], v[42:49], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v117, v114
	v_mul_f32_e32 v114, v125, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v125, v123, s[8:11], 0 offen
	buffer_load_dword v131, v6, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[148:155], v[82:89], v[118:121], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_add_lshl_u32 v118, v122, v2, 1
	s_waitcnt vmcnt(1)
	s_nop 2
	v_mul_f32_e32 v114, v114, v125
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v126, s[8:11], 0 offen
	v_add_lshl_u32 v118, v124, v2, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v115, v114
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v127, s[8:11], 0 offen
	v_add_lshl_u32 v115, v128, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[118:121], v[106:113], v[26:33], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v116, v114
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v114, v129, s[8:11], 0 offen
	v_add_lshl_u32 v115, v130, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[106:109], v[106:113], v[18:25], 0, v0, v0 op_sel_hi:[0,0,0]
	v_add_lshl_u32 v111, v122, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v117, v114
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v125, v123, s[8:11], 0 offen
	buffer_load_dword v131, v7, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[114:117], v[148:155], v[66:73], v[118:121], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_add_lshl_u32 v118, v122, v3, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[106:109], v[148:155], v[50:57], v[106:109], v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 1
	v_mul_f32_e32 v114, v114, v125
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v126, s[8:11], 0 offen
	v_add_lshl_u32 v118, v124, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v115, v114
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v118, s[4:7], 0 offen
	buffer_load_dword v114, v127, s[8:11], 0 offen
	v_add_lshl_u32 v115, v128, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v114, v116, v114
	v_mul_f32_e32 v114, v131, v114
	v_cvt_pk_bf16_f32 v114, v114, s0
	buffer_store_short v114, v115, s[4:7], 0 offen
	buffer_load_dword v114, v129, s[8:11], 0 offen
	v_add_lshl_u32 v115, v130, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v110, v117, v114
	v_mul_f32_e32 v110, v131, v110
	v_cvt_pk_bf16_f32 v110, v110, s0
	buffer_store_short v110, v115, s[4:7], 0 offen
	buffer_load_dword v110, v123, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v114, v8, s[12:15], 0 offen
	v_or_b32_e32 v115, 32, v5
	v_lshlrev_b32_e32 v116, 2, v115
	v_mul_lo_u32 v115, v115, s3
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v106, v106, v110
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v114, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v111, s[4:7], 0 offen
	buffer_load_dword v106, v126, s[8:11], 0 offen
	v_add_lshl_u32 v110, v124, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v107, v106
	v_mul_f32_e32 v106, v114, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v127, s[8:11], 0 offen
	v_add_lshl_u32 v107, v128, v4, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[110:113], v[74:81], v[58:65], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v108, v106
	v_mul_f32_e32 v106, v114, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v107, s[4:7], 0 offen
	buffer_load_dword v106, v129, s[8:11], 0 offen
	v_add_lshl_u32 v107, v130, v4, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[58:61], v[10:17], v[58:65], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v109, v106
	v_mul_f32_e32 v106, v114, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v107, s[4:7], 0 offen
	buffer_load_dword v114, v116, s[8:11], 0 offen
	buffer_load_dword v117, v9, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[106:109], v[98:105], v[90:97], v[110:113], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_or_b32_e32 v110, 33, v5
	v_add_lshl_u32 v111, v115, v1, 1
	v_lshlrev_b32_e32 v118, 2, v110
	v_mfma_scale_f32_16x16x128_f8f6f4 v[58:61], v[34:41], v[90:97], v[58:61], v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v106, v106, v114
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v117, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v111, s[4:7], 0 offen
	buffer_load_dword v106, v118, s[8:11], 0 offen
	v_mul_lo_u32 v114, v110, s3
	v_or_b32_e32 v111, 34, v5
	v_add_lshl_u32 v110, v114, v1, 1
	v_lshlrev_b32_e32 v119, 2, v111
	v_mul_lo_u32 v120, v111, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v107, v106
	v_mul_f32_e32 v106, v117, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v119, s[8:11], 0 offen
	v_or_b32_e32 v107, 35, v5
	v_add_lshl_u32 v110, v120, v1, 1
	v_lshlrev_b32_e32 v121, 2, v107
	v_mul_lo_u32 v122, v107, s3
	v_add_lshl_u32 v107, v122, v1, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v108, v106
	v_mul_f32_e32 v106, v117, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v121, s[8:11], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[110:113], v[74:81], v[42:49], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v109, v106
	v_mul_f32_e32 v106, v117, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v107, s[4:7], 0 offen
	buffer_load_dword v117, v116, s[8:11], 0 offen
	buffer_load_dword v123, v6, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[106:109], v[98:105], v[82:89], v[110:113], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_add_lshl_u32 v110, v115, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[42:45], v[10:17], v[42:49], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 1
	v_mul_f32_e32 v106, v106, v117
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v118, s[8:11], 0 offen
	v_add_lshl_u32 v110, v114, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[42:45], v[34:41], v[82:89], v[42:45], v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v107, v106
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v119, s[8:11], 0 offen
	v_add_lshl_u32 v107, v120, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[110:113], v[74:81], v[26:33], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v108, v106
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v107, s[4:7], 0 offen
	buffer_load_dword v106, v121, s[8:11], 0 offen
	v_add_lshl_u32 v107, v122, v2, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[74:77], v[74:81], v[18:25], 0, v0, v0 op_sel_hi:[0,0,0]
	v_add_lshl_u32 v80, v115, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v109, v106
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v107, s[4:7], 0 offen
	buffer_load_dword v117, v116, s[8:11], 0 offen
	buffer_load_dword v123, v7, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[106:109], v[98:105], v[66:73], v[110:113], v0, v0 op_sel_hi:[0,0,0]
	s_nop 6
	v_add_lshl_u32 v110, v115, v3, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[74:77], v[98:105], v[50:57], v[74:77], v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(1)
	s_nop 1
	v_mul_f32_e32 v106, v106, v117
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v118, s[8:11], 0 offen
	v_add_lshl_u32 v110, v114, v3, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[26:29], v[10:17], v[26:33], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v107, v106
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v110, s[4:7], 0 offen
	buffer_load_dword v106, v119, s[8:11], 0 offen
	v_add_lshl_u32 v107, v120, v3, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[26:29], v[34:41], v[66:73], v[26:29], v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v106, v108, v106
	v_mul_f32_e32 v106, v123, v106
	v_cvt_pk_bf16_f32 v106, v106, s0
	buffer_store_short v106, v107, s[4:7], 0 offen
	buffer_load_dword v106, v121, s[8:11], 0 offen
	v_add_lshl_u32 v107, v122, v3, 1
	v_mfma_scale_f32_16x16x128_f8f6f4 v[10:13], v[10:17], v[18:25], 0, v0, v0 op_sel_hi:[0,0,0]
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v78, v109, v106
	v_mul_f32_e32 v78, v123, v78
	v_cvt_pk_bf16_f32 v78, v78, s0
	buffer_store_short v78, v107, s[4:7], 0 offen
	buffer_load_dword v78, v116, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v79, v8, s[12:15], 0 offen
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v74, v74, v78
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v74, v79, v74
	v_cvt_pk_bf16_f32 v74, v74, s0
	buffer_store_short v74, v80, s[4:7], 0 offen
	buffer_load_dword v74, v118, s[8:11], 0 offen
	v_add_lshl_u32 v78, v114, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v74, v75, v74
	v_mul_f32_e32 v74, v79, v74
	v_cvt_pk_bf16_f32 v74, v74, s0
	buffer_store_short v74, v78, s[4:7], 0 offen
	buffer_load_dword v74, v119, s[8:11], 0 offen
	v_add_lshl_u32 v75, v120, v4, 1
	v_add_lshl_u32 v78, v122, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v74, v76, v74
	v_mul_f32_e32 v74, v79, v74
	v_cvt_pk_bf16_f32 v74, v74, s0
	buffer_store_short v74, v75, s[4:7], 0 offen
	buffer_load_dword v74, v121, s[8:11], 0 offen
	v_or_b32_e32 v75, 48, v5
	v_lshlrev_b32_e32 v76, 2, v75
	v_mul_lo_u32 v64, v75, s3
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v62, v77, v74
	v_mul_f32_e32 v62, v79, v62
	v_cvt_pk_bf16_f32 v62, v62, s0
	buffer_store_short v62, v78, s[4:7], 0 offen
	buffer_load_dword v62, v76, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v63, v9, s[12:15], 0 offen
	v_or_b32_e32 v9, 49, v5
	v_add_lshl_u32 v74, v64, v1, 1
	v_lshlrev_b32_e32 v65, 2, v9
	v_mul_lo_u32 v9, v9, s3
	v_add_lshl_u32 v75, v9, v1, 1
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v58, v58, v62
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v58, v63, v58
	v_cvt_pk_bf16_f32 v58, v58, s0
	buffer_store_short v58, v74, s[4:7], 0 offen
	buffer_load_dword v58, v65, s[8:11], 0 offen
	v_or_b32_e32 v62, 50, v5
	v_lshlrev_b32_e32 v74, 2, v62
	v_or_b32_e32 v5, 51, v5
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v58, v59, v58
	v_mul_f32_e32 v58, v63, v58
	v_cvt_pk_bf16_f32 v58, v58, s0
	buffer_store_short v58, v75, s[4:7], 0 offen
	buffer_load_dword v58, v74, s[8:11], 0 offen
	v_mul_lo_u32 v59, v62, s3
	v_add_lshl_u32 v75, v59, v1, 1
	v_lshlrev_b32_e32 v62, 2, v5
	v_mul_lo_u32 v5, v5, s3
	v_add_lshl_u32 v1, v5, v1, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v58, v60, v58
	v_mul_f32_e32 v58, v63, v58
	v_cvt_pk_bf16_f32 v58, v58, s0
	buffer_store_short v58, v75, s[4:7], 0 offen
	buffer_load_dword v58, v62, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v46, v61, v58
	v_mul_f32_e32 v46, v63, v46
	v_cvt_pk_bf16_f32 v46, v46, s0
	buffer_store_short v46, v1, s[4:7], 0 offen
	buffer_load_dword v1, v76, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v46, v6, s[12:15], 0 offen
	v_add_lshl_u32 v6, v64, v2, 1
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v1, v42, v1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v46, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v6, s[4:7], 0 offen
	buffer_load_dword v1, v65, s[8:11], 0 offen
	v_add_lshl_u32 v6, v9, v2, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v43, v1
	v_mul_f32_e32 v1, v46, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v6, s[4:7], 0 offen
	buffer_load_dword v1, v74, s[8:11], 0 offen
	v_add_lshl_u32 v6, v59, v2, 1
	v_add_lshl_u32 v2, v5, v2, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v44, v1
	v_mul_f32_e32 v1, v46, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v6, s[4:7], 0 offen
	buffer_load_dword v1, v62, s[8:11], 0 offen
	v_add_lshl_u32 v6, v64, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v45, v1
	v_mul_f32_e32 v1, v46, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v2, s[4:7], 0 offen
	buffer_load_dword v1, v76, s[8:11], 0 offen
	s_nop 0
	buffer_load_dword v2, v7, s[12:15], 0 offen
	s_waitcnt vmcnt(1)
	v_mul_f32_e32 v1, v26, v1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v2, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v6, s[4:7], 0 offen
	buffer_load_dword v1, v65, s[8:11], 0 offen
	v_add_lshl_u32 v6, v9, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v27, v1
	v_mul_f32_e32 v1, v2, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v6, s[4:7], 0 offen
	buffer_load_dword v1, v74, s[8:11], 0 offen
	v_add_lshl_u32 v6, v59, v3, 1
	v_add_lshl_u32 v3, v5, v3, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v28, v1
	v_mul_f32_e32 v1, v2, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v6, s[4:7], 0 offen
	buffer_load_dword v1, v62, s[8:11], 0 offen
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v1, v29, v1
	v_mul_f32_e32 v1, v2, v1
	v_cvt_pk_bf16_f32 v1, v1, s0
	buffer_store_short v1, v3, s[4:7], 0 offen
	buffer_load_dword v6, v76, s[8:11], 0 offen
	buffer_load_dword v7, v8, s[12:15], 0 offen
	v_mfma_scale_f32_16x16x128_f8f6f4 v[0:3], v[34:41], v[50:57], v[10:13], v0, v0 op_sel_hi:[0,0,0]
	v_add_lshl_u32 v8, v64, v4, 1
	s_waitcnt vmcnt(1)
	s_nop 9
	v_mul_f32_e32 v0, v0, v6
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v7, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	buffer_store_short v0, v8, s[4:7], 0 offen
	buffer_load_dword v0, v65, s[8:11], 0 offen
	v_add_lshl_u32 v6, v9, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v1, v0
	v_mul_f32_e32 v0, v7, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	buffer_store_short v0, v6, s[4:7], 0 offen
	buffer_load_dword v0, v74, s[8:11], 0 offen
	v_add_lshl_u32 v1, v59, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v2, v0
	v_mul_f32_e32 v0, v7, v0
	v_cvt_pk_bf16_f32 v0, v0, s0
	buffer_store_short v0, v1, s[4:7], 0 offen
	buffer_load_dword v0, v62, s[8:11], 0 offen
	v_add_lshl_u32 v1, v5, v4, 1
	s_waitcnt vmcnt(0)
	v_mul_f32_e32 v0, v3, v0
	v_mul_f32_e32 v0, v7, v0
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
		.amdhsa_next_free_vgpr 169
		.amdhsa_next_free_sgpr 96
		.amdhsa_accum_offset 156
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

	.set .Lfp8_tail_gemm_0.num_vgpr, 156
	.set .Lfp8_tail_gemm_0.num_agpr, 0
	.set .Lfp8_tail_gemm_0.numbered_sgpr, 24
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
    .sgpr_count:     30
    .sgpr_spill_count: 0
    .symbol:         fp8_tail_gemm_0.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     156
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
