	.amdgcn_target "amdgcn-amd-amdhsa-unknown-gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	ring_loop_0
	.p2align	8
	.type	ring_loop_0,@function
ring_loop_0:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dword s10, s[0:1], 0x1c
	v_lshlrev_b32_e32 v0, 4, v0
	v_and_b32_e32 v1, 0xc00, v0
	s_mov_b32 s7, 0x27000
	v_readfirstlane_b32 s2, v1
	s_mov_b32 s6, -1
	s_waitcnt lgkmcnt(0)
	s_and_b32 s5, s5, 0xffff
	s_mov_b32 m0, s2
	s_cmp_lt_i32 s10, 1
	buffer_load_dwordx4 v0, s[4:7], 0 offen lds
	s_mov_b32 s9, 0
	s_cbranch_scc1 .LBB0_8
	s_load_dwordx2 s[0:1], s[0:1], 0x10
	v_add_u32_e32 v2, 0x400, v0
	s_movk_i32 s2, 0x3f0
	v_and_b32_e32 v2, 0xc00, v2
	s_and_b32 s8, s10, 7
	s_waitcnt lgkmcnt(0)
	s_and_b32 s1, s1, 0xffff
	v_and_or_b32 v2, v0, s2, v2
	s_cmp_lt_u32 s10, 8
	s_mov_b64 s[2:3], -1
	s_cbranch_scc1 .LBB0_5
	s_and_b32 s10, s10, 0x7ffffff8
	v_or_b32_e32 v3, 0x1000, v1
	s_mov_b32 s11, 0x8000
	s_mov_b32 s2, s6
	s_mov_b32 s3, s7
.LBB0_3:
	v_readfirstlane_b32 s13, v3
	s_add_i32 s12, s11, 0xffff9000
	s_mov_b32 m0, s13
	v_add_u32_e32 v4, s11, v0
	buffer_load_dwordx4 v0, s[4:7], s12 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[12:15], v2
	v_readfirstlane_b32 s15, v1
	s_add_i32 s14, s11, 0xffffa000
	v_add_u32_e32 v5, 0xffff8000, v4
	s_mov_b32 m0, s15
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[12:15], v5, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s14 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[12:15], v2 offset:4096
	s_add_i32 s16, s11, 0xffffb000
	v_add_u32_e32 v6, 0xffff9000, v4
	s_mov_b32 m0, s13
	s_add_i32 s17, s11, 0xffffc000
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[12:15], v6, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s16 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[12:15], v2
	v_add_u32_e32 v7, 0xffffa000, v4
	s_mov_b32 m0, s15
	s_add_i32 s18, s11, 0xffffd000
	v_add_u32_e32 v8, 0xffffb000, v4
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[12:15], v7, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s17 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[12:15], v2 offset:4096
	s_mov_b32 m0, s13
	s_add_i32 s19, s11, 0xffffe000
	v_add_u32_e32 v9, 0xffffc000, v4
	s_add_i32 s20, s11, 0xfffff000
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[12:15], v8, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s18 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[12:15], v2
	s_mov_b32 m0, s15
	v_add_u32_e32 v10, 0xffffd000, v4
	v_add_u32_e32 v11, 0xffffe000, v4
	s_add_i32 s9, s9, 8
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[12:15], v9, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s19 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[6:9], v2 offset:4096
	s_mov_b32 m0, s13
	v_add_u32_e32 v4, 0xfffff000, v4
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[6:9], v10, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s20 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[6:9], v2
	s_mov_b32 m0, s15
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[6:9], v11, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v0, s[4:7], s11 offen lds
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[6:9], v2 offset:4096
	s_add_i32 s11, s11, 0x8000
	s_cmp_lg_u32 s10, s9
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[6:9], v4, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_cbranch_scc1 .LBB0_3
	s_cmp_lg_u32 s8, 0
	s_cselect_b64 s[2:3], -1, 0
.LBB0_5:
	s_and_b64 vcc, exec, s[2:3]
	s_cbranch_vccz .LBB0_8
	s_lshl_b32 s9, s9, 12
	s_mov_b32 s2, s6
	s_mov_b32 s3, s7
	.p2align	5, , 4
.LBB0_7:
	s_add_i32 s10, s9, 0x1000
	s_and_b32 s11, s10, 0x1000
	v_or_b32_e32 v3, s11, v1
	s_add_i32 s8, s8, -1
	v_readfirstlane_b32 s11, v3
	s_mov_b32 m0, s11
	s_and_b32 s11, s9, 0x1000
	buffer_load_dwordx4 v0, s[4:7], s10 offen lds
	v_or_b32_e32 v4, s11, v2
	s_waitcnt vmcnt(1)
	s_barrier
	ds_read_b128 v[4:7], v4
	v_add_u32_e32 v3, s9, v0
	s_mov_b32 s9, s10
	s_cmp_lg_u32 s8, 0
	s_waitcnt lgkmcnt(0)
	buffer_store_dwordx4 v[4:7], v3, s[0:3], 0 offen
	s_waitcnt lgkmcnt(0)
	s_barrier
	s_cbranch_scc1 .LBB0_7
.LBB0_8:
	s_endpgm
.Lfunc_end0:
	.size	ring_loop_0, .Lfunc_end0-ring_loop_0
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel ring_loop_0
		.amdhsa_group_segment_fixed_size 8192
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_kernarg_size 32
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
		.amdhsa_next_free_vgpr 16
		.amdhsa_next_free_sgpr 21
		.amdhsa_accum_offset 16
		.amdhsa_reserve_vcc 1
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

	.set .Lring_loop_0.num_vgpr, 16
	.set .Lring_loop_0.num_agpr, 0
	.set .Lring_loop_0.numbered_sgpr, 21
	.set .Lring_loop_0.num_named_barrier, 0
	.set .Lring_loop_0.private_seg_size, 0
	.set .Lring_loop_0.uses_vcc, 1
	.set .Lring_loop_0.uses_flat_scratch, 0
	.set .Lring_loop_0.has_dyn_sized_stack, 0
	.set .Lring_loop_0.has_recursion, 0
	.set .Lring_loop_0.has_indirect_call, 0
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
      - .offset:         28
        .size:           4
        .value_kind:     by_value
    .group_segment_fixed_size: 8192
    .kernarg_segment_align: 8
    .kernarg_segment_size: 32
    .max_flat_workgroup_size: 256
    .name:           ring_loop_0
    .private_segment_fixed_size: 0
    .reqd_workgroup_size:
      - 256
      - 1
      - 1
    .sgpr_count:     27
    .sgpr_spill_count: 0
    .symbol:         ring_loop_0.kd
    .uniform_work_group_size: 1
    .uses_dynamic_stack: false
    .vgpr_count:     16
    .vgpr_spill_count: 0
    .wavefront_size: 64
amdhsa.target:   amdgcn-amd-amdhsa-unknown-gfx950
amdhsa.version:
  - 1
  - 2
...

	.end_amdgpu_metadata
